import { startSandbox, type Sandbox } from '../../sandbox';
import { PLANS } from '../../core/types';
import { N8nTestInstance } from '../support/n8n/instance';
import { workflowOf } from '../support/n8n/engine';
import { callbackGenerateNode, itemsOf, outputOf, spedUpPlan } from '../support/n8n/workflows';

/**
 * Wait for Callback on an n8n the service cannot call back (a desktop or private install: its
 * resume URL is plain http or a local address): the node checks its resume URL before creating
 * anything and waits by polling inside the same execution, saying so on each item.
 */
const SPEED = 40;
let sandbox: Sandbox;

beforeAll(async () => {
	// Like the real service: callbacks only to https:// addresses.
	sandbox = await startSandbox({ port: 0, speed: SPEED, insecureCallbacks: false });
});
afterAll(async () => {
	await sandbox.close();
});

const generate = callbackGenerateNode({
	// 720P 4 s renders in about 30 s at full speed, under a second here: polling starts then.
	options: { expectedRenderSeconds: 1 },
});

it.each([
	['plain http on the local network', 'http://n8n.internal:5678', /plain http/],
	['https on a private address', 'https://192.168.1.20:5678', /not reachable from the internet/],
	['https on an mDNS name', 'https://n8n.local', /not reachable from the internet/],
])('%s (%s): polls instead of parking, finishes with the videos, and says why', async (_label, webhookUrl, reason) => {
	const n8n = await N8nTestInstance.start({ omniVideoApi: { apiKey: sandbox.keys.premium, baseUrl: sandbox.url, ...spedUpPlan(PLANS.premium, SPEED) } }, { webhookUrl });
	try {
		const journalBefore = sandbox.journal.length;
		const execution = await n8n.execute(workflowOf([generate], {}), 'Generate', itemsOf({ prompt: 'Fallback one' }, { prompt: 'Fallback two' }));
		// Never parked: the node waited inside the execution.
		expect(execution.status).not.toBe('waiting');
		const run = await execution.finished;
		expect(run.status).toBe('success');
		const items = outputOf(run, 'Generate');
		expect(items.map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }]);
		for (const item of items) {
			expect(item.json).toMatchObject({ status: 'done', waitedBy: 'polling', videoUrl: expect.any(String) });
			expect(String(item.json.callbackSkipped)).toMatch(reason);
			expect(String(item.json.callbackSkipped)).toContain(new URL(webhookUrl).origin);
			// No callback URL was given to the service: nothing was refused, nothing waits for a call.
			expect(sandbox.jobs.all.get(String(item.json.jobId))?.body.callbackUrl).toBeUndefined();
		}
		const refused = sandbox.journal.slice(journalBefore).filter((entry) => Number(entry.status) >= 400);
		expect(refused).toEqual([]);
	} finally {
		await n8n.stop();
	}
}, 60_000);

it('http://127.0.0.1 against a service that calls back only over https: the refused creates make nothing, the node polls, and the next run polls at once', async () => {
	const n8n = await N8nTestInstance.start({ omniVideoApi: { apiKey: sandbox.keys.premium, baseUrl: sandbox.url, ...spedUpPlan(PLANS.premium, SPEED) } });
	try {
		for (const run of [1, 2]) {
			const journalBefore = sandbox.journal.length;
			const jobsBefore = sandbox.jobs.all.size;
			const execution = await n8n.execute(workflowOf([generate], {}), 'Generate', itemsOf({ prompt: `Loopback ${run}a` }, { prompt: `Loopback ${run}b` }));
			expect(execution.status).not.toBe('waiting');
			const finished = await execution.finished;
			expect(finished.status).toBe('success');
			const items = outputOf(finished, 'Generate');
			for (const item of items) {
				expect(item.json).toMatchObject({ status: 'done', waitedBy: 'polling', videoUrl: expect.any(String) });
				expect(String(item.json.callbackSkipped)).toMatch(/refused the resume URL http:\/\/127\.0\.0\.1:\d+ as a callback URL/);
			}
			expect(sandbox.jobs.all.size - jobsBefore).toBe(2);
			const refused = sandbox.journal.slice(journalBefore).filter((entry) => entry.status === 400);
			// The first run learns from the service's answer (one refused create per item); the second does not ask.
			expect(refused).toHaveLength(run === 1 ? 2 : 0);
		}
	} finally {
		await n8n.stop();
	}
}, 60_000);
