/**
 * What n8n does with the static data of an execution that waited in the queue: the host behaviour
 * behind the rows the soak leaves held after a restart (docs/n8n-internals.md, static data).
 */
import { check, createActiveWorkflow, executionsOf, postRows, sleep } from './context';
import { waitUntil } from './processes';
import type { ScaledLayout } from './scaledLayout';

export const QUEUED_STATIC_DATA = 'queue-static-data-saved-from-a-queued-execution';

/**
 * A webhook workflow whose one Code node appends its execution's id to the workflow's static data
 * runs once; then, with both workers stopped, three executions are queued, and the workers start again.
 * Each of the three saves the copy of the static data it was created with, whole: the ids of the
 * others are lost. Passes while n8n behaves so; when it fails, n8n keeps concurrent executions'
 * writes, and the node's notes of a batch survive a backlog.
 */
export async function queuedExecutionsStaticData(layout: ScaledLayout): Promise<string> {
	const context = layout.context;
	const code = "const s = $getWorkflowStaticData('global'); s.ids = (s.ids || []).concat([$execution.id]); return [{ json: { ids: s.ids } }];";
	const workflowId = await createActiveWorkflow(context, {
		name: 'Static data of queued executions',
		nodes: [
			{ id: 'static-hook', name: 'Hook', type: 'n8n-nodes-base.webhook', typeVersion: 2, position: [0, 0], webhookId: 'static-data-of-queued', parameters: { path: 'static-data-of-queued', httpMethod: 'POST', responseMode: 'onReceived' } },
			{ id: 'static-note', name: 'Note Id', type: 'n8n-nodes-base.code', typeVersion: 2, position: [200, 0], parameters: { jsCode: code } },
		],
		connections: { Hook: { main: [[{ node: 'Note Id', type: 'main', index: 0 }]] } },
	});
	const start = () => postRows(context, 'static-data-of-queued', []);
	const succeeded = (count: number) =>
		waitUntil(`${count} executions of workflow ${workflowId} succeeded`, async () => (await executionsOf(context, workflowId)).filter((execution) => execution.status === 'success').length >= count, 120_000, 1_000);
	const ids = async (): Promise<string[]> => {
		const row = (await layout.sql(`SELECT "staticData" FROM workflow_entity WHERE id = '${workflowId}'`)).trim();
		return ((row ? JSON.parse(row) : {}) as { global?: { ids?: string[] } }).global?.ids ?? [];
	};
	await start();
	await succeeded(1);
	const before = await ids();
	await layout.stopWorker(0);
	await layout.stopWorker(1);
	for (let i = 0; i < 3; i++) await start();
	await layout.restartWorker(0, 'worker-1-static-data');
	await layout.restartWorker(1, 'worker-2-static-data');
	await succeeded(4);
	await sleep(2_000);
	const after = await ids();
	const queued = (await executionsOf(context, workflowId)).map((execution) => execution.id).filter((id) => !before.includes(id));
	const kept = queued.filter((id) => after.includes(id));
	check(kept.length < queued.length, `the static data kept every queued execution's id (${after.join(', ')}): n8n no longer saves a queued execution's copy whole`);
	return `static data before: [${before.join(', ')}]; after executions ${queued.join(', ')} ran from the queue: [${after.join(', ')}]`;
}
