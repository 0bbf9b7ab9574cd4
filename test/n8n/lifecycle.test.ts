/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code, never shipped */
import { createHook } from 'node:async_hooks';
import type { IRun } from 'n8n-workflow';
import { startSandbox } from '../../sandbox';
import { N8nTestInstance } from '../support/n8n/instance';
import { workflowOf } from '../support/n8n/engine';
import { itemsOf, omniVideoNode, outputOf } from '../support/n8n/workflows';

/**
 * Regression: n8n-core starts a one-minute sweep timer with the first node context it builds.
 * The test instance must stop it with the rest of the engine, or every suite that runs a node
 * leaves jest (and CI) waiting forever after its last test.
 */
it('stopping the test instance leaves no timer it started running', async () => {
	// Timers created from here on, with where they were created, until they fire or are cleared.
	const live = new Map<number, string>();
	let recording = true;
	const hook = createHook({
		init(id, type) {
			if (recording && type === 'Timeout') live.set(id, new Error().stack ?? '');
		},
		destroy(id) {
			live.delete(id);
		},
	}).enable();
	try {
		const sandbox = await startSandbox({ port: 0 });
		const n8n = await N8nTestInstance.start({ omniVideoApi: { apiKey: sandbox.keys.pro, baseUrl: sandbox.url, plan: 'pro' } });
		const workflow = workflowOf(
			[omniVideoNode('Get', { resource: 'job', operation: 'get', jobId: 'job_unknown' }, { onError: 'continueRegularOutput' })],
			{},
		);
		let run: IRun;
		try {
			run = await (await n8n.execute(workflow, 'Get', itemsOf({}))).finished;
		} finally {
			// Also when the run throws: the two servers left listening would keep Jest from exiting.
			await n8n.stop();
			await sandbox.close();
		}
		// Checked once both are stopped: a failed check would skip the stops and keep Jest alive.
		expect(outputOf(run, 'Get')[0].json.error).toEqual(expect.stringContaining('job_unknown'));
		recording = false;
		// Timers that were due anyway (keep-alive sockets, short waits) fire within this pause.
		await new Promise((resolve) => setTimeout(resolve, 1_500));
		expect([...live.values()]).toEqual([]);
	} finally {
		hook.disable();
	}
});
