import { startSandbox, type Sandbox } from '../../sandbox';
import { PLANS } from '../../core/types';
import { N8nTestInstance } from '../support/n8n/instance';
import { finishedWithin } from '../support/n8n/finishedWithin';
import { workflowOf } from '../support/n8n/engine';
import { callbackGenerateNode, itemsOf, outputOf, spedUpPlan } from '../support/n8n/workflows';
import { expectedRenderSeconds } from '../../core/pacing/estimate';
import { readingOfThisRun, serviceFront, type ServiceFront } from '../support/serviceReading';

/**
 * Wait for Callback's findings from reading the code (issue 23): each check failed before its fix.
 * Run on the reading of the service this run takes (see serviceReading.ts).
 */
const SPEED = 40;
let sandbox: Sandbox;
let front: ServiceFront;
let n8n: N8nTestInstance;

beforeAll(async () => {
	sandbox = await startSandbox({ port: 0, speed: SPEED, insecureCallbacks: true });
	front = await serviceFront(sandbox.url, readingOfThisRun());
	n8n = await N8nTestInstance.start({});
});
afterAll(async () => {
	await n8n.stop();
	await front.close();
	await sandbox.close();
});

/** The credential, with the signing secret only where the service signs its callbacks. */
function useCredential(secret: string | undefined): void {
	const signs = sandbox.service.switches.callbackSigning === 'signed';
	n8n.credentials.omniVideoApi = { apiKey: sandbox.keys.premium, baseUrl: front.url, ...spedUpPlan(PLANS.premium, SPEED), webhookSecret: signs ? (secret ?? '') : '' };
}


function jobsMade(): number {
	return sandbox.jobs.all.size;
}

it("the workflow's own custom data (9 values) is left alone: the batch lives in the node's context, every item ends by callback, no job twice", async () => {
	useCredential(sandbox.webhookSecret);
	// Nine values of the workflow's own: n8n keeps 10 per execution and drops the rest unsaid.
	const customData = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`own${i}`, `value ${i}`]));
	const before = jobsMade();
	const execution = await n8n.execute(workflowOf([callbackGenerateNode({ options: { expectedRenderSeconds: 1 } })], {}), 'Generate', itemsOf({ prompt: 'Kept one' }, { prompt: 'Kept two' }), 'manual', {
		customData,
	});
	expect(execution.status).toBe('waiting');
	const run = await finishedWithin(execution);
	expect(run.status).toBe('success');
	const items = outputOf(run, 'Generate');
	expect(items.map((item) => item.json.status)).toEqual(['done', 'done']);
	expect(items.map((item) => item.json.waitedBy)).toEqual([undefined, undefined]);
	expect(run.data.resultData.metadata).toMatchObject(customData);
	expect(jobsMade() - before).toBe(2);
});

it('an unsigned callback naming a job outside the batch is refused without a lookup on the user key', async () => {
	useCredential(undefined);
	const execution = await n8n.execute(workflowOf([callbackGenerateNode()], {}), 'Generate', itemsOf({ prompt: 'Guarded, unsigned' }));
	const [parked] = outputOf(execution.run!, 'Generate');
	const journalBefore = sandbox.journal.length;
	const forged = await fetch(String(parked.json.callbackUrl), {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ id: 'job_forged0000', status: 'done', resultUrls: ['https://evil.example/x.mp4'] }),
	});
	expect(forged.status).toBe(404);
	expect(sandbox.journal.slice(journalBefore).filter((entry) => entry.path.includes('job_forged0000'))).toHaveLength(0);
	const run = await finishedWithin(execution);
	expect(outputOf(run, 'Generate')[0].json.status).toBe('done');
});

it('two identical rows given one job (Reuse a Job Made From the Same Input) both finish with it', async () => {
	useCredential(sandbox.webhookSecret);
	const before = jobsMade();
	const node = callbackGenerateNode({ options: { reuseHours: 1, expectedRenderSeconds: 1 } });
	const execution = await n8n.execute(workflowOf([node], {}), 'Generate', itemsOf({ prompt: 'Twin rows' }, { prompt: 'Twin rows' }));
	const run = await finishedWithin(execution);
	const items = outputOf(run, 'Generate');
	expect(items.map((item) => item.json.status)).toEqual(['done', 'done']);
	expect(items[0].json.jobId).toBe(items[1].json.jobId);
	expect(jobsMade() - before).toBe(1);
});

describe('every callback lost (the service delivers once; n8n was away)', () => {
	it('each item still ends with its job, done, looked up once it is overdue: within half its expected render time after its end, plus the engine steps', async () => {
		// The resume URL points where nothing listens: every callback is lost.
		const away = await N8nTestInstance.start(
			{ omniVideoApi: { apiKey: sandbox.keys.premium, baseUrl: front.url, ...spedUpPlan(PLANS.premium, SPEED), webhookSecret: sandbox.webhookSecret } },
			{ webhookUrl: 'http://127.0.0.1:9' },
		);
		try {
			const expectedVirtualMs = expectedRenderSeconds('720P', 4) * 1000;
			const node = callbackGenerateNode({ callbackTimeoutMinutes: 60, options: { expectedRenderSeconds: expectedVirtualMs / 1000 / SPEED } });
			const execution = await away.execute(workflowOf([node], {}), 'Generate', itemsOf({ prompt: 'Lost one' }, { prompt: 'Lost two [sandbox:job-fails-content-policy]' }));
			expect(execution.status).toBe('waiting');
			const jobIds = outputOf(execution.run!, 'Generate').map((item) => String(item.json.jobId));
			// n8n's WaitTracker wakes the execution at its wait time (the harness: at the moment itself).
			const run = await finishedWithin(execution, 30_000);
			const endedAt = sandbox.clock.now();
			expect(run.status).toBe('success');
			const items = outputOf(run, 'Generate');
			expect(items.map((item) => item.json.jobId)).toEqual(jobIds);
			expect(items[0].json).toMatchObject({ status: 'done', videoUrl: expect.any(String) });
			// A failed job sends no callback on the strictest reading: it ends failed all the same.
			expect(items[1].json).toMatchObject({ status: 'failed', errorCode: 'content_policy' });
			const lastEnd = Math.max(...jobIds.map((jobId) => sandbox.jobs.all.get(jobId)!.endsAt));
			const after = endedAt - lastEnd;
			// The bound: half the expected render time (the overdue margin), plus what the engine's steps take
			// on a loaded machine, in real time, which ×SPEED makes the sandbox's: 2 s real (CI once took 1.6 s
			// real in all, 64 s of the sandbox's, against a bound of 35). Without the overdue lookup the items
			// would wait out the 60-minute callback timeout.
			expect(after).toBeLessThanOrEqual(0.5 * expectedVirtualMs + 2_000 * SPEED);
		} finally {
			await away.stop();
		}
	});
});

it('Reuse with Wait for Callback: a second execution with the same input is not refused for sending the key with another resume URL', async () => {
	useCredential(sandbox.webhookSecret);
	const workflow = workflowOf([callbackGenerateNode({ options: { reuseHours: 1, expectedRenderSeconds: 1 } })], {});
	for (let run = 0; run < 2; run++) {
		const finished = await finishedWithin(await n8n.execute(workflow, 'Generate', itemsOf({ prompt: 'Same input, two executions' })));
		expect(String(finished.data.resultData.error?.message ?? finished.status)).toBe('success');
		expect(outputOf(finished, 'Generate')[0].json.status).toBe('done');
	}
});
