import type { INode, INodeParameters, IWorkflowBase } from 'n8n-workflow';
import type { Sandbox } from '../../sandbox';
import type { N8nTestInstance, Execution } from '../support/n8n/instance';
import { workflowOf } from '../support/n8n/engine';
import { startOnReading, type ReadingInstance } from '../support/n8n/readingInstance';
import { callbackGenerateNode, itemsOf, omniVideoNode, outputOf } from '../support/n8n/workflows';
import { readingOfThisRun } from '../support/serviceReading';

/**
 * Every way n8n runs Generate Video again for the same execution gets the jobs made before, never
 * new ones: the executions list's Retry (original and saved workflow), Retry On Fail. A new run
 * makes new videos, unless Reuse a Job Made From the Same Input says otherwise. Counted in the
 * sandbox's own records of the jobs it made (each one charged).
 */
const SPEED = 40;
let instance: ReadingInstance;
let sandbox: Sandbox;
let n8n: N8nTestInstance;

/** The reading of the service this run takes (see serviceReading.ts): same checks on each. */
const reading = readingOfThisRun();
/**
 * Reuse a Job Made From the Same Input across manual runs rests on the service replaying a key:
 * n8n saves no static data for a manual run, where production runs keep our records of the jobs
 * Reuse made (docs/n8n-internals.md).
 */
const onKeysReplayed = reading === 'default' ? it : it.skip;

beforeAll(async () => {
	instance = await startOnReading(SPEED);
	({ sandbox, n8n } = instance);
});
afterAll(async () => {
	await instance.close();
});

function pollNode(parameters: INodeParameters = {}, extra: Partial<INode> = {}): INode {
	return omniVideoNode(
		'Generate',
		{
			resource: 'video',
			operation: 'generate',
			prompt: '={{ $json.prompt }}',
			resolution: '720P',
			duration: 4,
			waitMode: 'poll',
			...parameters,
			// 720P 4 s renders in about 30 s at full speed, under a second here: the first look then.
			options: { expectedRenderSeconds: 1, ...(parameters.options as INodeParameters | undefined) },
		},
		extra,
	);
}

/** Eight rows; the sixth is refused by the content policy once rendered (the sandbox's marker). */
const ROWS = Array.from({ length: 8 }, (_, i) => ({ prompt: i === 5 ? `Row 6 [sandbox:job-fails-content-policy]` : `Row ${i + 1}` }));

function jobsMade(): number {
	return sandbox.jobs.all.size;
}

async function failedRun(workflow: IWorkflowBase): Promise<Execution> {
	const execution = await n8n.execute(workflow, 'Generate', itemsOf(...ROWS));
	expect((await execution.finished).status).toBe('error');
	return execution;
}

describe("the executions list's Retry", () => {
	it('gets every job the failed run made, with the original and with the saved workflow: 0 new jobs', async () => {
		const workflow = workflowOf([pollNode()], {});
		const before = jobsMade();
		const failed = await failedRun(workflow);
		expect(jobsMade() - before).toBe(8);

		const retried = await n8n.retry(failed.id);
		const run = await retried.finished;
		// Row 6's job failed, and fails the node again: the same job, not a new charge.
		expect(run.status).toBe('error');
		expect(String(run.data.resultData.error?.message)).toMatch(/content polic/i);
		expect(jobsMade() - before).toBe(8);

		const saved = structuredClone(workflow);
		const retriedSaved = await n8n.retry(retried.id, saved);
		expect((await retriedSaved.finished).status).toBe('error');
		expect(jobsMade() - before).toBe(8);
	}, 60_000);

	it('makes only the failed job again when asked (Retry Failed Jobs), and nothing more without it', async () => {
		const workflow = workflowOf([pollNode()], {});
		const before = jobsMade();
		const failed = await failedRun(workflow);

		const saved = structuredClone(workflow);
		saved.nodes = [pollNode({ options: { retryFailedJobs: true } })];
		const retried = await n8n.retry(failed.id, saved);
		await retried.finished;
		expect(jobsMade() - before).toBe(9);

		// The new job fails too (same prompt): a retry without the option returns a failed job
		// rather than paying again.
		const again = await n8n.retry(retried.id, workflow);
		await again.finished;
		expect(jobsMade() - before).toBe(9);
	}, 60_000);

	it('returns each row once its job has ended, marked as made by the earlier run', async () => {
		const rows = ROWS.map((row, i) => (i === 5 ? { prompt: 'Row 6, fixed' } : row));
		const workflow = workflowOf([pollNode({ prompt: "={{ $json.prompt.replace(' [sandbox:job-fails-content-policy]', '') }}" })], {});
		// The failed run: the original prompts, row 6 refused.
		const failed = await n8n.execute(workflowOf([pollNode()], {}, { id: workflow.id }), 'Generate', itemsOf(...ROWS));
		expect((await failed.finished).status).toBe('error');
		const before = jobsMade();

		// The user fixes the prompt expression and retries with the saved workflow.
		const retried = await n8n.retry(failed.id, workflow);
		const run = await retried.finished;
		expect(run.status).toBe('success');
		expect(jobsMade() - before).toBe(1);
		const items = outputOf(run, 'Generate');
		expect(items.map((item) => item.pairedItem)).toEqual(rows.map((_, item) => ({ item })));
		expect(items.map((item) => item.json.status)).toEqual(Array(8).fill('done'));
		expect(items.map((item) => item.json.reused === true)).toEqual(rows.map((_, i) => i !== 5));
	}, 60_000);

	it('after a Poll timeout, waits for the jobs still rendering instead of making new ones', async () => {
		// 1080P 10 s renders for about a minute at full speed (1.5 s here); the poll gives up at 0.3 s.
		const slow = pollNode({ resolution: '1080P', duration: 10, timeoutMinutes: 0.005 });
		const workflow = workflowOf([slow], {});
		const rows = [{ prompt: 'Slow one' }, { prompt: 'Slow two' }];
		const before = jobsMade();
		const failed = await n8n.execute(workflow, 'Generate', itemsOf(...rows));
		const failedRun = await failed.finished;
		expect(failedRun.status).toBe('error');
		expect(String(failedRun.data.resultData.error?.message)).toMatch(/still .* after/);
		expect(jobsMade() - before).toBe(2);

		const saved = structuredClone(workflow);
		saved.nodes = [pollNode({ resolution: '1080P', duration: 10 })];
		const run = await (await n8n.retry(failed.id, saved)).finished;
		expect(run.status).toBe('success');
		expect(jobsMade() - before).toBe(2);
		expect(outputOf(run, 'Generate').map((item) => item.json.status)).toEqual(['done', 'done']);
	}, 60_000);
});

describe('other ways n8n runs the node again', () => {
	it("Retry On Fail: the node's second try in the same execution gets the first try's jobs", async () => {
		const workflow = workflowOf([pollNode({}, { retryOnFail: true, maxTries: 2, waitBetweenTries: 0 })], {});
		const before = jobsMade();
		await failedRun(workflow);
		expect(jobsMade() - before).toBe(8);
	}, 60_000);

	it('a node run again in the same execution (a loop) makes a new video each run', async () => {
		// Again runs once per parent that feeds it (n8n's v1 order): run 0 and run 1, same prompt.
		const seed = omniVideoNode('Seed', { resource: 'video', operation: 'generate', prompt: 'Seed', resolution: '720P', duration: 4, waitMode: 'dontWait' });
		const lookUp = (name: string) => omniVideoNode(name, { resource: 'job', operation: 'get', jobId: '={{ $json.jobId }}' });
		const again = omniVideoNode('Again', { resource: 'video', operation: 'generate', prompt: 'Regenerate until approved', resolution: '720P', duration: 4, waitMode: 'dontWait' });
		const into = (node: string) => ({ main: [[{ node, type: 'main' as const, index: 0 }]] });
		const workflow = workflowOf([seed, lookUp('First look'), lookUp('Second look'), again], {
			Seed: { main: [[{ node: 'First look', type: 'main', index: 0 }, { node: 'Second look', type: 'main', index: 0 }]] },
			'First look': into('Again'),
			'Second look': into('Again'),
		});
		const before = jobsMade();
		const run = await (await n8n.execute(workflow, 'Seed', itemsOf({}))).finished;
		expect(run.status).toBe('success');
		const runs = run.data.resultData.runData.Again.map((task) => task.data?.main[0]?.[0]?.json.jobId);
		expect(runs).toHaveLength(2);
		expect(new Set(runs).size).toBe(2);
		expect(jobsMade() - before).toBe(3);
	}, 60_000);

	it('a new execution with the same rows makes new videos', async () => {
		const workflow = workflowOf([pollNode()], {});
		const rows = [{ prompt: 'Fresh one' }, { prompt: 'Fresh two' }];
		const before = jobsMade();
		for (let run = 0; run < 2; run++) {
			expect((await (await n8n.execute(workflow, 'Generate', itemsOf(...rows))).finished).status).toBe('success');
		}
		expect(jobsMade() - before).toBe(4);
	}, 60_000);

	it('Reuse a Job Made From the Same Input: a new production execution within the window gets the job already made, from our records', async () => {
		const workflow = workflowOf([pollNode({ options: { reuseHours: 1 } })], {});
		const rows = [{ prompt: 'Reused by a schedule, one' }, { prompt: 'Reused by a schedule, two' }];
		const before = jobsMade();
		const first = await (await n8n.execute(workflow, 'Generate', itemsOf(...rows), 'trigger')).finished;
		const second = await (await n8n.execute(workflow, 'Generate', itemsOf(...rows), 'trigger')).finished;
		expect(jobsMade() - before).toBe(2);
		const ids = (run: typeof first) => outputOf(run, 'Generate').map((item) => item.json.jobId);
		expect(ids(second)).toEqual(ids(first));
		expect(outputOf(second, 'Generate').map((item) => item.json.reused)).toEqual([true, true]);
	}, 60_000);

	onKeysReplayed('Reuse a Job Made From the Same Input: a new manual execution within the window gets the job already made', async () => {
		const workflow = workflowOf([pollNode({ options: { reuseHours: 1 } })], {});
		const rows = [{ prompt: 'Reused one' }, { prompt: 'Reused two' }];
		const before = jobsMade();
		const first = await (await n8n.execute(workflow, 'Generate', itemsOf(...rows))).finished;
		const second = await (await n8n.execute(workflow, 'Generate', itemsOf(...rows))).finished;
		expect(jobsMade() - before).toBe(2);
		const ids = (run: typeof first) => outputOf(run, 'Generate').map((item) => item.json.jobId);
		expect(ids(second)).toEqual(ids(first));
		expect(outputOf(second, 'Generate').map((item) => item.json.reused)).toEqual([true, true]);
	}, 60_000);
});

describe('Wait for Callback, retried after a create failed', () => {
	it('polls for the jobs the failed run made (their callbacks go to that execution) and creates only the missing one', async () => {
		const workflow = workflowOf([callbackGenerateNode({ options: { expectedRenderSeconds: 1 } })], {});
		// The service answers row 2's create with a 500 (no job made); a create is never sent blind again.
		const rows = [{ prompt: 'Parked one' }, { prompt: 'Parked two [sandbox:error-500-before-accept]' }, { prompt: 'Parked three' }];
		const before = jobsMade();
		const failed = await n8n.execute(workflow, 'Generate', itemsOf(...rows));
		const failedRun = await failed.finished;
		expect(failedRun.status).toBe('error');
		expect(jobsMade() - before).toBe(2);

		const saved = structuredClone(workflow);
		saved.nodes = [
			callbackGenerateNode({ prompt: "={{ $json.prompt.replace(' [sandbox:error-500-before-accept]', '') }}", options: { expectedRenderSeconds: 1 } }),
		];
		const retried = await n8n.retry(failed.id, saved);
		expect(retried.status).not.toBe('waiting');
		const run = await retried.finished;
		expect(run.status).toBe('success');
		expect(jobsMade() - before).toBe(3);
		const items = outputOf(run, 'Generate');
		expect(items.map((item) => item.json.status)).toEqual(['done', 'done', 'done']);
		expect(items.map((item) => item.json.waitedBy)).toEqual(['polling', 'polling', 'polling']);
		expect(String(items[0].json.callbackSkipped)).toContain(`retries execution ${failed.id}`);
	}, 60_000);
});
