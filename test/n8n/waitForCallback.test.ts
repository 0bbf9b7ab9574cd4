/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code, never shipped */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRunExecutionData } from 'n8n-workflow';
import { startSandbox, type Sandbox } from '../../sandbox';
import { PLANS } from '../../core/types';
import { N8nTestInstance } from '../support/n8n/instance';
import { finishedWithin } from '../support/n8n/finishedWithin';
import { binaryBytes, chain, workflowOf } from '../support/n8n/engine';
import { AFTER_TYPE, afterRuns } from '../support/n8n/testNodes';
import { callbackGenerateNode as generateNode, itemsOf, outputOf, spedUpPlan } from '../support/n8n/workflows';
import { expectedRenderSeconds } from '../../core/pacing/estimate';

const SPEED = 40;
const SAMPLE_MP4 = readFileSync(join(__dirname, '../../sandbox/fixtures/sample.mp4'));

/** The node's estimate on the sandbox's clock: a job is overdue (looked up) on the same time scale. */
function callbackGenerateNode(extra: Parameters<typeof generateNode>[0] = {}) {
	const options = { expectedRenderSeconds: expectedRenderSeconds('720P', 4) / SPEED, ...((extra.options as object | undefined) ?? {}) };
	return generateNode({ ...extra, options });
}

let sandbox: Sandbox;
let n8n: N8nTestInstance;

beforeAll(async () => {
	sandbox = await startSandbox({ port: 0, speed: SPEED, insecureCallbacks: true });
	n8n = await N8nTestInstance.start({});
});
afterAll(async () => {
	await n8n.stop();
	await sandbox.close();
});

function useCredential(secret: string | undefined): void {
	n8n.credentials.omniVideoApi = {
		apiKey: sandbox.keys.premium,
		baseUrl: sandbox.url,
		...spedUpPlan(PLANS.premium, SPEED),
		webhookSecret: secret ?? '',
	};
}

/** Generate, then a node that counts its runs: the batch must reach it once, whole. */
function withAfter(generate: ReturnType<typeof callbackGenerateNode>, name = `After ${Math.random().toString(36).slice(2, 8)}`) {
	const after = { id: `id-${name}`, name, type: AFTER_TYPE, typeVersion: 1, position: [200, 0] as [number, number], parameters: {} };
	return { workflow: workflowOf([generate, after], chain('Generate', name)), after: name };
}

function callsTo(executionId: string) {
	return n8n.webhookCalls.filter((call) => call.path.startsWith(`/webhook-waiting/${executionId}`));
}

describe('Wait for Callback: park, then resume through webhook()', () => {
	it('parks with the resume URL as callbackUrl and resumes once every job has ended, with the videos', async () => {
		useCredential(sandbox.webhookSecret);
		const { workflow, after } = withAfter(callbackGenerateNode({ download: true }));
		const execution = await n8n.execute(workflow, 'Generate', itemsOf({ prompt: 'One' }, { prompt: 'Two' }, { prompt: 'Three' }));

		// Parked: the run stopped at the node, with the queued jobs shown and the resume URL passed on.
		expect(execution.status).toBe('waiting');
		const parked = outputOf(execution.run!, 'Generate');
		expect(parked.map((item) => item.json.status)).toEqual(['queued', 'queued', 'queued']);
		const jobIds = parked.map((item) => String(item.json.jobId));
		// On n8n 2.14+ (n8n-workflow's createRunExecutionData makes a resume token) the execution
		// has one, and n8n refuses a resume without it: the URLs must carry it as `?signature=`.
		const tokenMade = (createRunExecutionData() as { resumeToken?: string }).resumeToken !== undefined;
		expect(n8n.resumeTokenOf(execution.id) !== undefined).toBe(tokenMade);
		expect(new URL(String(parked[0].json.callbackUrl)).searchParams.get('signature') ?? undefined).toBe(n8n.resumeTokenOf(execution.id));
		// Our own path after the resume URL (a Wait node's is ''), its token kept, and the row the job is for.
		jobIds.forEach((jobId, row) => expect(sandbox.jobs.all.get(jobId)?.body.callbackUrl).toBe(n8n.callbackUrlOf(execution.id, row)));
		// The items show the URL each job calls back, while parked and once done.
		parked.forEach((item, row) => expect(item.json.callbackUrl).toBe(n8n.callbackUrlOf(execution.id, row)));

		const run = await finishedWithin(execution);
		expect(run.status).toBe('success');
		const items = outputOf(run, 'Generate');
		expect(items.map((item) => item.json.jobId)).toEqual(jobIds);
		expect(items.map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }]);
		expect(items.map((item) => item.json.callbackUrl)).toEqual(jobIds.map((jobId) => sandbox.jobs.all.get(jobId)?.body.callbackUrl));
		for (const item of items) {
			expect(item.json).toMatchObject({ status: 'done', videoUrl: expect.any(String), creditsUsed: expect.any(Number) });
			expect((await binaryBytes(item.binary!.video)).equals(SAMPLE_MP4)).toBe(true);
		}
		// Every callback was answered 2xx (or 409 while the execution ran, 503 while it was resuming);
		// the node after ran once, with the whole batch.
		expect(callsTo(execution.id).every((call) => call.status < 300 || call.status === 409 || call.status === 503)).toBe(true);
		expect(afterRuns.get(after)).toEqual([3]);
	});

	// On the strictest reading callbacks come unsigned, a secret or not: each is confirmed by a lookup.
	const onSpec = process.env.OMNI_SANDBOX_SERVICE === 'spec';
	it.each([
		['signed', true, onSpec ? 2.2 : 1.1],
		['confirmed by lookup', false, onSpec ? 2.2 : 2.1],
	])('a batch of 10 (%s, secret: %s) costs at most %s requests a job; every callback answered at once, resumed once', async (_label, signed, perJob) => {
		useCredential(signed ? sandbox.webhookSecret : undefined);
		const journalBefore = sandbox.journal.length;
		const prompts = Array.from({ length: 10 }, (_, i) => ({ prompt: `Batch clip ${i}` }));
		const { workflow, after } = withAfter(callbackGenerateNode());
		const execution = await n8n.execute(workflow, 'Generate', itemsOf(...prompts));
		const run = await finishedWithin(execution, 30_000);
		const items = outputOf(run, 'Generate');
		expect(items).toHaveLength(10);
		expect(items.every((item) => item.json.status === 'done')).toBe(true);
		const apiRequests = sandbox.journal.slice(journalBefore).filter((entry) => entry.path.startsWith('/api/'));
		expect(apiRequests.length / 10).toBeLessThanOrEqual(perJob as number);
		expect(callsTo(execution.id).every((call) => [200, 409, 503].includes(call.status))).toBe(true);
		expect(afterRuns.get(after)).toEqual([10]);
	});

	it('confirms callbacks by lookup when the credential has no signing secret', async () => {
		useCredential(undefined);
		const execution = await n8n.execute(workflowOf([callbackGenerateNode()], {}), 'Generate', itemsOf({ prompt: 'Unsigned' }));
		const jobId = String(outputOf(execution.run!, 'Generate')[0].json.jobId);
		const run = await finishedWithin(execution);
		expect(outputOf(run, 'Generate')[0].json).toMatchObject({ jobId, status: 'done' });
		const lookups = sandbox.journal.filter((entry) => entry.method === 'GET' && entry.path === `/api/v1/jobs/${jobId}`);
		expect(lookups.length).toBeGreaterThanOrEqual(1);
	});

	it('a failed job resumes as an item with status failed, the reason and the job id', async () => {
		useCredential(sandbox.webhookSecret);
		const execution = await n8n.execute(
			workflowOf([callbackGenerateNode()], {}),
			'Generate',
			itemsOf({ prompt: 'Fine' }, { prompt: 'no [sandbox:job-fails-content-policy]' }),
		);
		const run = await finishedWithin(execution);
		const [ok, failed] = outputOf(run, 'Generate');
		expect(ok.json.status).toBe('done');
		expect(failed.json).toMatchObject({ status: 'failed', errorCode: 'content_policy', error: expect.any(String), jobId: expect.stringMatching(/^job_/) });
	});

	it('refuses a forged callback (bad signature) and stays parked; a late callback after the end gets 409', async () => {
		useCredential(sandbox.webhookSecret);
		const execution = await n8n.execute(workflowOf([callbackGenerateNode()], {}), 'Generate', itemsOf({ prompt: 'Guarded' }));
		const [parked] = outputOf(execution.run!, 'Generate');
		const resumeUrl = String(parked.json.callbackUrl);
		const forgedBody = JSON.stringify({ id: parked.json.jobId, status: 'done', resultUrls: ['https://evil.example/x.mp4'] });
		const forged = await fetch(resumeUrl, {
			method: 'POST',
			headers: {
				'content-type': 'application/json',
				'webhook-id': 'msg_forged',
				'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
				'webhook-signature': 'v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
			},
			body: forgedBody,
		});
		expect(forged.status).toBe(401);
		expect(['waiting', 'running', 'success']).toContain(execution.status);
		// A job that is not the batch's: refused before any request is spent on it.
		const journalBefore = sandbox.journal.length;
		const stranger = await fetch(resumeUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'job_not_ours', status: 'done' }) });
		expect([404, 409]).toContain(stranger.status);
		expect(sandbox.journal.slice(journalBefore).filter((entry) => entry.path.includes('job_not_ours'))).toHaveLength(0);
		const run = await finishedWithin(execution);
		expect(outputOf(run, 'Generate')[0].json.videoUrl).not.toContain('evil.example');

		const late = await fetch(resumeUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: forgedBody });
		expect(late.status).toBe(409);
	});

	it('as an AI tool it never parks: it polls and returns JSON', async () => {
		useCredential(sandbox.webhookSecret);
		const tool = callbackGenerateNode({ options: { expectedRenderSeconds: 1 }, download: true });
		tool.type = `${tool.type}Tool`;
		const execution = await n8n.execute(workflowOf([tool], {}), 'Generate', itemsOf({ prompt: 'Agent asks' }));
		expect(execution.status).not.toBe('waiting');
		const run = await finishedWithin(execution);
		const [item] = outputOf(run, 'Generate');
		expect(item.json.status).toBe('done');
		expect(item.binary).toBeUndefined();
	});
});

describe('Wait for Callback beside a Wait node, and callbacks at once', () => {
	it('a late callback to our path cannot resume a Wait node parked later; a call to the Wait node’s path does not wake ours', async () => {
		useCredential(sandbox.webhookSecret);
		const { WAIT_TYPE } = await import('../support/n8n/testNodes');
		const wait = { id: 'id-wait', name: 'Wait', type: WAIT_TYPE, typeVersion: 1, position: [200, 0] as [number, number], parameters: {} };
		const workflow = workflowOf([callbackGenerateNode(), wait], chain('Generate', 'Wait'));
		const execution = await n8n.execute(workflow, 'Generate', itemsOf({ prompt: 'Before a Wait node' }));
		// $execution.resumeUrl, the Wait node's (with its resume token on n8n 2.14+).
		const resumeUrl = n8n.resumeUrlOf(execution.id);
		// While ours is parked, a call on the Wait node's path ('') finds no webhook of ours.
		const toWaitPath = await fetch(resumeUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"approved":true}' });
		expect(toWaitPath.status).toBe(404);
		// Our batch ends; the Wait node parks next, in the same execution.
		const until = Date.now() + 20_000;
		while (n8n.executions.get(execution.id)?.run?.data.resultData.lastNodeExecuted !== 'Wait' && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
		expect(execution.status).toBe('waiting');
		const jobId = String(outputOf(execution.run!, 'Generate')[0].json.jobId);
		// A late copy of our callback, on our path: not the Wait node's to take.
		const late = await fetch(n8n.callbackUrlOf(execution.id, 0), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: jobId, status: 'done' }) });
		expect(late.status).toBe(404);
		expect(execution.status).toBe('waiting');
		// The Wait node's own caller still resumes it.
		const approve = await fetch(resumeUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"approved":true}' });
		expect(approve.status).toBe(200);
		const run = await finishedWithin(execution);
		expect(outputOf(run, 'Wait')[0].json).toEqual({ resumedBy: { approved: true } });
	});
});

describe('two callbacks at once (n8n 2.x resumes an execution once)', () => {
	it('one wakes the node; the other is answered 503 (same process) or 500 (n8n refused a second resume), never two steps at once; the node after runs once', async () => {
		const { standardWebhookSignature } = await import('../../sandbox/signing');
		// The service's own callbacks go nowhere: only the two below reach this n8n.
		const quiet = await N8nTestInstance.start(
			{ omniVideoApi: { apiKey: sandbox.keys.premium, baseUrl: sandbox.url, ...spedUpPlan(PLANS.premium, SPEED), webhookSecret: sandbox.webhookSecret } },
			{ webhookUrl: 'http://127.0.0.1:9' },
		);
		quiet.waitTracker.on = false;
		try {
			const listening = quiet.listeningUrl;
			const { workflow, after } = withAfter(callbackGenerateNode());
			const execution = await quiet.execute(workflow, 'Generate', itemsOf({ prompt: 'At once A' }, { prompt: 'At once B' }));
			expect(execution.status).toBe('waiting');
			const ids = outputOf(execution.run!, 'Generate').map((item) => String(item.json.jobId));
			const until = Date.now() + 20_000;
			while (ids.some((id) => sandbox.jobs.all.get(id)!.endsAt > sandbox.clock.now()) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
			// Both jobs' outcomes, signed as the service signs them, delivered at the same moment.
			const deliver = (jobId: string, row: number) => {
				const body = JSON.stringify({ id: jobId, status: 'done', resultUrls: ['https://cdn.example/v.mp4'] });
				const timestamp = Math.floor(Date.now() / 1000);
				const signature = standardWebhookSignature(sandbox.webhookSecret, `msg_${jobId}`, timestamp, body);
				return fetch(quiet.callbackUrlOf(execution.id, row, listening), {
					method: 'POST',
					headers: { 'content-type': 'application/json', 'webhook-id': `msg_${jobId}`, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature },
					body,
				});
			};
			const statuses = (await Promise.all([deliver(ids[0], 0), deliver(ids[1], 1)])).map((answer) => answer.status).sort();
			// One resumed (200); the other resumed after it (200), was told to come again (503), was refused
			// by n8n (500) or came while the step ran (409): never two steps at once.
			expect(statuses[0]).toBe(200);
			expect([200, 409, 500, 503]).toContain(statuses[1]);
			// Delivered again, as the documented service does: the batch ends, the node after runs once.
			await new Promise((resolve) => setTimeout(resolve, 100));
			const again = await deliver(ids[0], 0);
			const again1 = await deliver(ids[1], 1);
			expect([again.status, again1.status].every((status) => status === 200 || status === 409)).toBe(true);
			const run = await finishedWithin(execution, 20_000);
			expect(outputOf(run, 'Generate').map((item) => item.json.status)).toEqual(['done', 'done']);
			expect(afterRuns.get(after)).toEqual([2]);
		} finally {
			await quiet.stop();
		}
	});
});
