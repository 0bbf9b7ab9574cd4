import { startSandbox, type Sandbox } from '../../sandbox';
import { startReceiver, type ReceivedCallback } from '../../test/support/receiver';
import { createNodeClient } from '../../node-host/runtime';
import { jobCompleted } from '../src/triggers/job-completed';
import { MemoryStore } from './harness';

/** Job Completed: the sandbox's real, signed callbacks, handed to the trigger as the engine hands a webhook's request. */
let sandbox: Sandbox;

beforeAll(async () => {
	sandbox = await startSandbox({ port: 0, speed: 40, insecureCallbacks: true });
});
afterAll(async () => {
	await sandbox.close();
});

async function deliveryOf(prompt: string): Promise<ReceivedCallback> {
	const receiver = await startReceiver();
	try {
		const client = createNodeClient({ baseUrl: sandbox.url, apiKey: sandbox.keys.premium, plan: 'premium' });
		await client.generateVideo({ prompt, resolution: '720P', duration: 4, callbackUrl: receiver.url }, { allowInsecureLoopbackCallback: true });
		const [delivery] = await receiver.waitFor(1, 15_000);
		return delivery;
	} finally {
		await receiver.close();
	}
}

/** The trigger's run, with the context the engine builds for a webhook trigger (TestOrRunHookContext). */
function fire(delivery: ReceivedCallback, options: { secret?: boolean; store?: MemoryStore; outcome?: string } = {}) {
	const props = { apiKey: sandbox.keys.premium, baseUrl: sandbox.url, plan: 'premium', webhookSecret: options.secret ? sandbox.webhookSecret : undefined };
	const context = {
		auth: { type: 'CUSTOM_AUTH', props },
		propsValue: { outcome: options.outcome },
		store: options.store ?? new MemoryStore(),
		payload: { body: JSON.parse(delivery.body), rawBody: delivery.body, headers: delivery.headers, queryParams: {} },
		webhookUrl: 'http://localhost:4200/api/v1/webhooks/flow_1',
		server: { apiUrl: 'http://localhost:3000', publicUrl: 'http://localhost:4200', token: 'engine' },
		files: { write: async () => 'file' },
	};
	return jobCompleted.run(context as never) as Promise<Array<Record<string, unknown>>>;
}

it('a signed callback starts the flow once, with no request; its replay does not start it again', async () => {
	const delivery = await deliveryOf('A sunrise over hills');
	const store = new MemoryStore();
	const before = sandbox.journal.length;
	expect(await fire(delivery, { secret: true, store })).toEqual([expect.objectContaining({ status: 'done', confirmedBy: 'signature', videoUrl: expect.stringMatching(/output\.mp4$/) })]);
	expect(sandbox.journal.length).toBe(before);
	expect(await fire(delivery, { secret: true, store })).toEqual([]);
});

it('a forged signature starts nothing', async () => {
	const delivery = await deliveryOf('A quiet harbour');
	const forged = { ...delivery, body: delivery.body.replace('"done"', '"failed"') };
	expect(await fire(forged, { secret: true })).toEqual([]);
});

it('without a secret, the job is confirmed by lookup; a made-up job starts nothing', async () => {
	const delivery = await deliveryOf('A field of tulips');
	const store = new MemoryStore();
	expect(await fire(delivery, { store })).toEqual([expect.objectContaining({ status: 'done', confirmedBy: 'lookup' })]);
	expect(await fire(delivery, { store })).toEqual([]);
	const madeUp = { ...delivery, body: JSON.stringify({ ...JSON.parse(delivery.body), id: 'job_made_up', status: 'done' }) };
	expect(await fire(madeUp)).toEqual([]);
});

it('fires for the chosen outcome only', async () => {
	const delivery = await deliveryOf('Rain on glass [sandbox:job-fails-content-policy]');
	expect(await fire(delivery, { secret: true, outcome: 'done' })).toEqual([]);
	expect(await fire(delivery, { secret: true, outcome: 'failed' })).toEqual([expect.objectContaining({ status: 'failed', errorCode: 'content_policy' })]);
});
