import type { INode, INodeParameters } from 'n8n-workflow';
import type { Sandbox } from '../../sandbox';
import type { N8nTestInstance } from '../support/n8n/instance';
import { workflowOf } from '../support/n8n/engine';
import { finishedWithin } from '../support/n8n/finishedWithin';
import { startOnReading, type ReadingInstance } from '../support/n8n/readingInstance';
import { callbackGenerateNode, itemsOf, outputOf } from '../support/n8n/workflows';

/**
 * Row Key: a row of the user's table that another production execution takes again (a schedule's
 * next tick after the row was reset, or while the first execution still waits) gets the job made
 * for it from our records in the workflow's static data, looked up, never created again; on both
 * readings, since nothing here rests on the service replaying a key. Counted in the sandbox's
 * own records of the jobs it made (each one charged).
 */
const SPEED = 40;
let instance: ReadingInstance;
let sandbox: Sandbox;
let n8n: N8nTestInstance;

beforeAll(async () => {
	instance = await startOnReading(SPEED);
	({ sandbox, n8n } = instance);
});
afterAll(async () => {
	await instance.close();
});

const jobsMade = (): number => sandbox.jobs.all.size;
/** 720P 4 s renders in about 30 s at full speed, under a second here: the first look then. */
const FAST = { expectedRenderSeconds: 1 };

function pollNode(options: INodeParameters = {}): INode {
	return callbackGenerateNode({ waitMode: 'poll', options: { rowKey: '={{ $json.id }}', ...FAST, ...options } });
}

const ids = (items: ReturnType<typeof outputOf>) => items.map((item) => item.json.jobId);

describe('Row Key', () => {
	it('a row taken again by a new production execution gets the job made for it; an edited row is a new job', async () => {
		const workflow = workflowOf([pollNode()], {});
		const rows = [
			{ id: 1, prompt: 'A row of the table, one' },
			{ id: 2, prompt: 'A row of the table, two' },
		];
		const before = jobsMade();
		const first = await (await n8n.execute(workflow, 'Generate', itemsOf(...rows), 'trigger')).finished;
		expect(first.status).toBe('success');
		// The next tick: row 1 taken again as it was (reset after a crash), row 2 edited, in another order.
		const second = await (await n8n.execute(workflow, 'Generate', itemsOf({ ...rows[1], prompt: 'A row of the table, two, edited' }, rows[0]), 'trigger')).finished;
		expect(second.status).toBe('success');
		expect(jobsMade() - before).toBe(3);
		const [edited, again] = outputOf(second, 'Generate');
		expect(again.json.jobId).toBe(ids(outputOf(first, 'Generate'))[0]);
		expect(again.json.reused).toBe(true);
		expect(again.json.status).toBe('done');
		expect(edited.json.jobId).not.toBe(ids(outputOf(first, 'Generate'))[1]);
		expect(edited.json.reused).toBeUndefined();
	}, 60_000);

	it('keys rows, not items: the same prompt in two rows is two jobs, and a row without a key a new job each execution', async () => {
		const workflow = workflowOf([pollNode({ rowKey: '={{ $json.id ?? "" }}' })], {});
		const rows = [{ id: 'a', prompt: 'The same prompt' }, { id: 'b', prompt: 'The same prompt' }, { prompt: 'No key' }];
		const before = jobsMade();
		for (let run = 0; run < 2; run++) expect((await (await n8n.execute(workflow, 'Generate', itemsOf(...rows), 'trigger')).finished).status).toBe('success');
		// a and b once each; the row without a key once per execution.
		expect(jobsMade() - before).toBe(4);
	}, 60_000);

	it("a row whose job failed gets that job back, and is made again only with Retry Failed Jobs", async () => {
		const rows = [{ id: 7, prompt: 'Refused [sandbox:job-fails-content-policy]' }];
		const before = jobsMade();
		const keep = workflowOf([pollNode()], {});
		await (await n8n.execute(keep, 'Generate', itemsOf(...rows), 'trigger')).finished;
		expect(jobsMade() - before).toBe(1);
		const again = await (await n8n.execute(keep, 'Generate', itemsOf(...rows), 'trigger')).finished;
		expect(again.status).toBe('error');
		expect(String(again.data.resultData.error?.message)).toMatch(/content polic/i);
		expect(jobsMade() - before).toBe(1);

		const remake = workflowOf([pollNode({ retryFailedJobs: true })], {}, { id: keep.id });
		await (await n8n.execute(remake, 'Generate', itemsOf(...rows), 'trigger')).finished;
		expect(jobsMade() - before).toBe(2);
	}, 60_000);

	it('Wait for Callback: a tick that takes the rows of a batch still parked gets its jobs (looked up when overdue), makes none, and both end', async () => {
		const node = callbackGenerateNode({ options: { rowKey: '={{ $json.id }}', ...FAST } });
		const workflow = workflowOf([node], {});
		const rows = [
			{ id: 11, prompt: 'Parked row one' },
			{ id: 12, prompt: 'Parked row two' },
		];
		const before = jobsMade();
		const first = await n8n.execute(workflow, 'Generate', itemsOf(...rows), 'trigger');
		expect(first.status).toBe('waiting');
		expect(jobsMade() - before).toBe(2);
		// A second execution takes the same rows while the first is parked (its jobs call the first back).
		const second = await n8n.execute(workflow, 'Generate', itemsOf(...rows), 'trigger');
		expect(jobsMade() - before).toBe(2);
		const [firstRun, secondRun] = await Promise.all([finishedWithin(first), finishedWithin(second)]);
		expect([firstRun.status, secondRun.status]).toEqual(['success', 'success']);
		expect(jobsMade() - before).toBe(2);
		const firstItems = outputOf(firstRun, 'Generate');
		const secondItems = outputOf(secondRun, 'Generate');
		expect(ids(secondItems)).toEqual(ids(firstItems));
		expect(secondItems.map((item) => item.json.status)).toEqual(['done', 'done']);
		expect(secondItems.map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }]);
	}, 60_000);
});
