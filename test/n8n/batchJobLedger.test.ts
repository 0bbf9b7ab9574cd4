import { Workflow, type IDataObject, type IExecuteFunctions, type INode, type INodeTypes } from 'n8n-workflow';
import { batchJobLedger, forgetBatchJobs } from '../../nodes/shared/batchJobLedger';
import { bothLedgers, nodeJobLedger } from '../../nodes/shared/nodeJobLedger';
import type { HostJobRecords, LedgerEntry } from '../../core';

/*
 * The notes of a parked batch's creates in the workflow's static data, as n8n's own Workflow keeps
 * it (an observable object whose changes n8n saves): reads change nothing, an ended batch leaves
 * nothing, and batches left behind do not pile up in the workflow's row.
 */
const node: INode = { id: 'n1', name: 'Generate', type: 'omniVideo', typeVersion: 1, position: [0, 0], parameters: {} };
// The Workflow needs node types only to run nodes, which this test does not.
const noNodeTypes = { getByName: () => undefined, getByNameAndVersion: () => undefined, getKnownTypes: () => ({}) } as unknown as INodeTypes;

function workflowWith(staticData: IDataObject = {}): Workflow {
	return new Workflow({ id: 'wf', nodes: [node], connections: {}, active: true, nodeTypes: noNodeTypes, staticData });
}

/**
 * What the ledger asks of n8n's context: the execution's id, the node's static data, and the
 * node's execution context (where nodeJobLedger keeps the execution's own records).
 */
function contextOf(workflow: Workflow, executionId: string, nodeContext: IDataObject = {}): IExecuteFunctions {
	// A partial context: the ledger reads these three members only.
	return { getExecutionId: () => executionId, getWorkflowStaticData: (type: string) => workflow.getStaticData(type, node), getContext: () => nodeContext } as unknown as IExecuteFunctions;
}

const changed = (workflow: Workflow): boolean => (workflow.staticData as IDataObject & { __dataChanged?: boolean }).__dataChanged === true;

it('notes a batch’s creates by execution, reads them back, and changes nothing by reading', () => {
	const first = workflowWith();
	const ledger = batchJobLedger(contextOf(first, 'e1'));
	expect(ledger.find('k1')).toBeUndefined();
	expect(changed(first)).toBe(false);
	ledger.note('k1', { sentAtMs: 5 });
	ledger.note('k1', { jobId: 'job_1' });
	expect(changed(first)).toBe(true);

	// The next step reads the saved static data: another execution of the workflow finds nothing of it.
	const saved = JSON.parse(JSON.stringify(first.staticData)) as IDataObject;
	const next = workflowWith(saved);
	expect(batchJobLedger(contextOf(next, 'e1')).find('k1')).toEqual({ jobId: 'job_1' });
	expect(batchJobLedger(contextOf(next, 'e2')).find('k1')).toBeUndefined();
	expect(changed(next)).toBe(false);

	// Its end drops its notes, and n8n sees the change (a nested object read from the database).
	forgetBatchJobs(contextOf(next, 'e1'));
	expect(changed(next)).toBe(true);
	expect(JSON.stringify(next.staticData)).not.toContain('e1');
});

it('drops batches left behind: two days after their last create, or the oldest past 2,000 notes', () => {
	const now = Date.now();
	const jobs = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, { j: `job_${i}` }]));
	const workflow = workflowWith({
		'node:Generate': {
			omniVideoBatchJobs: {
				abandoned: { t: now - 49 * 3_600_000, jobs: jobs(1) },
				older: { t: now - 60_000, jobs: jobs(1_500) },
				newer: { t: now - 1_000, jobs: jobs(1_000) },
			},
		},
	});
	batchJobLedger(contextOf(workflow, 'e3')).note('k', { jobId: 'job_new' });
	const kept = Object.keys((workflow.getStaticData('node', node).omniVideoBatchJobs ?? {}) as IDataObject);
	expect(kept.sort()).toEqual(['e3', 'newer']);
});

it('with the execution’s own records, a job either names wins over a create whose answer was not seen', () => {
	// The execution's own records, as a stale resume left them: the create sent, its answer lost.
	const notes = new Map<string, LedgerEntry>();
	const own: HostJobRecords = { find: (key) => notes.get(key), note: (key, entry) => void notes.set(key, entry), forget: (key) => void notes.delete(key) };
	const workflow = workflowWith();
	const both = bothLedgers(own, batchJobLedger(contextOf(workflow, 'e4')));
	both.note('k1', { sentAtMs: 5 });
	batchJobLedger(contextOf(workflow, 'e4')).note('k1', { jobId: 'job_1' });
	expect(both.find('k1')).toEqual({ jobId: 'job_1' });
	both.note('k2', { jobId: 'job_2' });
	batchJobLedger(contextOf(workflow, 'e4')).note('k2', { sentAtMs: 6 });
	expect(both.find('k2')).toEqual({ jobId: 'job_2' });
	both.note('k3', { sentAtMs: 7 });
	expect(both.find('k3')).toEqual({ sentAtMs: 7 });
});

it('a note carries over the execution’s own records that the static data lacks (a step woken on a queue-mode worker runs on an old copy)', () => {
	// The execution's own records are current: rows 1 and 2 made, row 3 sent with its answer unseen.
	const nodeContext: IDataObject = {};
	const own = nodeJobLedger(contextOf(workflowWith(), 'e5', nodeContext));
	own.note('k1', { jobId: 'job_1' });
	own.note('k2', { jobId: 'job_2' });
	own.note('k3', { sentAtMs: 3 });
	// The copy of the static data the woken step runs on knows row 2 only as sent, and row 3 not at all.
	const copy = workflowWith({ 'node:Generate': { omniVideoBatchJobs: { e5: { t: 1, jobs: { k2: { s: 2 } } } } } });
	batchJobLedger(contextOf(copy, 'e5', nodeContext)).note('k4', { jobId: 'job_4' });
	// What n8n saves over the workflow's static data holds every row's record.
	const saved = workflowWith(JSON.parse(JSON.stringify(copy.staticData)) as IDataObject);
	const notes = batchJobLedger(contextOf(saved, 'e5'));
	expect(['k1', 'k2', 'k3', 'k4'].map((key) => notes.find(key))).toEqual([{ jobId: 'job_1' }, { jobId: 'job_2' }, { sentAtMs: 3 }, { jobId: 'job_4' }]);
});

it('a job only the execution’s own records name (a Retry’s) is noted in the batch’s notes when found, so that notes exist for every row made', () => {
	const nodeContext: IDataObject = {};
	const workflow = workflowWith();
	nodeJobLedger(contextOf(workflow, 'e6', nodeContext)).note('k1', { jobId: 'job_1' });
	const both = bothLedgers(nodeJobLedger(contextOf(workflow, 'e6', nodeContext)), batchJobLedger(contextOf(workflow, 'e6')), true);
	expect(both.find('k1')).toEqual({ jobId: 'job_1' });
	expect(batchJobLedger(contextOf(workflow, 'e6')).find('k1')).toEqual({ jobId: 'job_1' });
	// Not for Reuse's records (copyOwnJobs off): finding changes nothing there.
	const other = workflowWith();
	expect(bothLedgers(nodeJobLedger(contextOf(other, 'e7', nodeContext)), batchJobLedger(contextOf(other, 'e7'))).find('k1')).toEqual({ jobId: 'job_1' });
	expect(batchJobLedger(contextOf(other, 'e7')).find('k1')).toBeUndefined();
});
