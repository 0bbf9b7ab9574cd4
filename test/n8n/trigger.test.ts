/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code, never shipped */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { INodeParameters, IWorkflowBase } from 'n8n-workflow';
import { startSandbox, type Sandbox } from '../../sandbox';
import { PLANS } from '../../core/types';
import { N8nTestInstance, type Execution } from '../support/n8n/instance';
import { binaryBytes, workflowOf } from '../support/n8n/engine';
import { itemsOf, omniVideoNode, outputOf, spedUpPlan, triggerNode } from '../support/n8n/workflows';
import { eventually } from '../support/receiver';

const SPEED = 40;
const SAMPLE_MP4 = readFileSync(join(__dirname, '../../sandbox/fixtures/sample.mp4'));

let sandbox: Sandbox;
let n8n: N8nTestInstance;

beforeAll(async () => {
	// The trigger's tests read deliveries as the sandbox's default sends them (signed, retried, one
	// for a failed job too: docs/api.md's callback decisions), so those switches are pinned; on
	// `npm run test:spec` the rest of the strict reading (keys ignored, no rate headers, bare 429s)
	// still applies. The trigger on unsigned deliveries is the lookup tests below.
	sandbox = await startSandbox({ port: 0, speed: SPEED, insecureCallbacks: true, callbackSigning: 'signed', callbackDelivery: 'retried', failedJobCallbacks: true });
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

/** An active workflow with the trigger, and its production URL. */
function activeTrigger(parameters: INodeParameters = {}): { workflow: IWorkflowBase; url: string } {
	const workflow = workflowOf([triggerNode('Omni Video Trigger', parameters)], {});
	n8n.activate(workflow);
	return { workflow, url: n8n.productionUrl(workflow, 'Omni Video Trigger') };
}

/** Generates with the trigger's URL as callback, through the Omni Video node as a user would. */
async function generateWithCallback(callbackUrl: string, prompt: string): Promise<string> {
	const workflow = workflowOf(
		[omniVideoNode('Generate', { resource: 'video', operation: 'generate', prompt, waitMode: 'dontWait', resolution: '720P', duration: 4, options: { callbackUrl } })],
		{},
	);
	const run = await (await n8n.execute(workflow, 'Generate', itemsOf({}))).finished;
	return String(outputOf(run, 'Generate')[0].json.jobId);
}

async function triggered(workflow: IWorkflowBase, count = 1): Promise<Execution[]> {
	const executions = await eventually(() => {
		const found = n8n.executionsOf(workflow).filter((execution) => execution.status === 'success');
		return found.length >= count ? found : undefined;
	}, 15_000);
	return executions;
}

function callsTo(url: string) {
	return n8n.webhookCalls.filter((call) => `${n8n.baseUrl}${call.path}` === url);
}

describe('Omni Video Trigger', () => {
	it('starts the workflow for a signed callback, with the job and its video', async () => {
		useCredential(sandbox.webhookSecret);
		const { workflow, url } = activeTrigger({ download: true });
		const jobId = await generateWithCallback(url, 'Fireworks over a harbour');
		const [execution] = await triggered(workflow);
		const [item] = outputOf(execution.run!, 'Omni Video Trigger');
		expect(item.json).toMatchObject({ jobId, status: 'done', confirmedBy: 'signature', videoUrl: expect.any(String) });
		expect((await binaryBytes(item.binary!.video)).equals(SAMPLE_MP4)).toBe(true);
		// Answered quickly with a plain JSON acknowledgement (not n8n's "firstEntryJson").
		expect(callsTo(url)[0]).toMatchObject({ status: 200 });
		expect(JSON.parse(callsTo(url)[0].body)).toMatchObject({ received: true, started: true });
	});

	it('a replayed delivery (same webhook-id) starts nothing the second time', async () => {
		useCredential(sandbox.webhookSecret);
		const { workflow, url } = activeTrigger();
		await generateWithCallback(url, 'Once only');
		await triggered(workflow);
		const [delivery] = callsTo(url);
		const replay = await fetch(url, { method: 'POST', headers: delivery.requestHeaders, body: delivery.requestBody });
		expect(replay.status).toBe(200);
		expect(await replay.json()).toMatchObject({ started: false, reason: 'Already delivered' });
		expect(n8n.executionsOf(workflow)).toHaveLength(1);
	});

	it("the service's own duplicate deliveries start one execution", async () => {
		useCredential(sandbox.webhookSecret);
		const { workflow, url } = activeTrigger();
		await generateWithCallback(url, 'Sent twice [sandbox:callback-duplicate]');
		await triggered(workflow);
		await eventually(() => (callsTo(url).length >= 2 ? true : undefined), 15_000);
		expect(n8n.executionsOf(workflow)).toHaveLength(1);
	});

	it('two copies of one delivery arriving at the same moment start one execution', async () => {
		// Confirmed by lookup, so both copies are in flight at once while their lookups run.
		useCredential(undefined);
		const { workflow, url } = activeTrigger();
		// A real job, ended, whose callback went elsewhere: its delivery is replayed here twice at once.
		const jobId = await generateWithCallback(`${n8n.baseUrl}/webhook/not-this-trigger`, 'Delivered twice at once');
		const job = await eventually(async () => {
			const answer = await fetch(`${sandbox.url}/api/v1/jobs/${jobId}`, { headers: { authorization: `Bearer ${sandbox.keys.premium}` } });
			const body = (await answer.json()) as { status: string };
			return body.status === 'done' ? body : undefined;
		}, 15_000);
		const body = JSON.stringify(job);
		const headers = { 'content-type': 'application/json', 'webhook-id': `msg_twice_${jobId}` };
		const answers = await Promise.all([1, 2].map(() => fetch(url, { method: 'POST', headers, body })));
		const replies = await Promise.all(answers.map(async (answer) => (await answer.json()) as { started: boolean }));
		expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
		expect(replies.filter((reply) => reply.started)).toHaveLength(1);
		await triggered(workflow);
		expect(n8n.executionsOf(workflow)).toHaveLength(1);
	});

	it('refuses a forged copy of an outcome already delivered as forged (401), not as a duplicate', async () => {
		useCredential(sandbox.webhookSecret);
		const { workflow, url } = activeTrigger();
		await generateWithCallback(url, 'Delivered, then forged');
		await triggered(workflow);
		const [delivery] = callsTo(url);
		const forged = await fetch(url, {
			method: 'POST',
			headers: { ...delivery.requestHeaders, 'webhook-signature': 'v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' },
			body: delivery.requestBody,
		});
		expect(forged.status).toBe(401);
		expect(n8n.executionsOf(workflow)).toHaveLength(1);
	});

	it('refuses a forged callback: bad signature with a secret, unknown job without one', async () => {
		useCredential(sandbox.webhookSecret);
		const { workflow, url } = activeTrigger();
		const body = JSON.stringify({ id: 'job_forged', status: 'done', resultUrls: ['https://evil.example/x.mp4'] });
		const headers = {
			'content-type': 'application/json',
			'webhook-id': 'msg_forged',
			'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
			'webhook-signature': 'v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
		};
		const signed = await fetch(url, { method: 'POST', headers, body });
		expect(signed.status).toBe(401);

		useCredential(undefined);
		const unsigned = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
		expect(unsigned.status).toBe(404);
		expect(n8n.executionsOf(workflow)).toHaveLength(0);
	});

	it('without a secret, confirms by lookup: a claim that a running job is done is refused', async () => {
		useCredential(undefined);
		const { workflow, url } = activeTrigger();
		const jobId = await generateWithCallback(`${n8n.baseUrl}/webhook/not-this-trigger`, 'Still rendering');
		const early = await fetch(url, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ id: jobId, status: 'done', resultUrls: ['https://evil.example/x.mp4'] }),
		});
		expect(early.status).toBe(409);
		expect(n8n.executionsOf(workflow)).toHaveLength(0);
	});

	it('fires only for the chosen outcome', async () => {
		useCredential(sandbox.webhookSecret);
		const onlyDone = activeTrigger({ events: 'done' });
		const onlyFailed = activeTrigger({ events: 'failed' });
		await generateWithCallback(onlyDone.url, 'Rejected [sandbox:job-fails-content-policy]');
		await generateWithCallback(onlyFailed.url, 'Rejected too [sandbox:job-fails-content-policy]');
		const [execution] = await triggered(onlyFailed.workflow);
		expect(outputOf(execution.run!, 'Omni Video Trigger')[0].json).toMatchObject({ status: 'failed', errorCode: 'content_policy' });
		await eventually(() => (callsTo(onlyDone.url).length > 0 ? true : undefined), 15_000);
		expect(JSON.parse(callsTo(onlyDone.url)[0].body)).toMatchObject({ started: false });
		expect(n8n.executionsOf(onlyDone.workflow)).toHaveLength(0);
	});
});
