import { startSandbox, type Sandbox } from '../../sandbox';
import { standardWebhookSignature } from '../../sandbox/signing';
import type { ReceivedCallback } from '../../test/support/receiver';
import { deliveriesOf, deliveryOf } from '../../test/support/callbackDelivery';
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

/** A flow with a Job Completed trigger: its id and its store (Activepieces keeps a store per flow). */
interface Flow {
	id: string;
	store: MemoryStore;
}
let flows = 0;
const newFlow = (): Flow => ({ id: `flow_${++flows}`, store: new MemoryStore() });

type Trigger = typeof jobCompleted;

/** The trigger's run, with the context the engine builds for a webhook trigger (TestOrRunHookContext). */
function fire(delivery: ReceivedCallback, options: { secret?: boolean; flow?: Flow; outcome?: string; includeVideoFile?: boolean; trigger?: Trigger } = {}) {
	const props = { apiKey: sandbox.keys.premium, baseUrl: sandbox.url, plan: 'premium', webhookSecret: options.secret ? sandbox.webhookSecret : undefined };
	const flow = options.flow ?? newFlow();
	const context = {
		auth: { type: 'CUSTOM_AUTH', props },
		propsValue: { outcome: options.outcome, includeVideoFile: options.includeVideoFile },
		store: flow.store,
		flows: { current: { id: flow.id, version: { id: `${flow.id}_v1` } } },
		payload: { body: JSON.parse(delivery.body), rawBody: delivery.body, headers: delivery.headers, queryParams: {} },
		webhookUrl: `http://localhost:4200/api/v1/webhooks/${flow.id}`,
		server: { apiUrl: 'http://localhost:3000', publicUrl: 'http://localhost:4200', token: 'engine' },
		files: { write: async () => 'file' },
	};
	return (options.trigger ?? jobCompleted).run(context as never) as Promise<Array<Record<string, unknown>>>;
}

/** The trigger as a new engine process loads it (after a restart): nothing remembered but the flow's store. */
async function restartedTrigger(): Promise<Trigger> {
	let trigger: Trigger | undefined;
	await jest.isolateModulesAsync(async () => {
		trigger = (await import('../src/triggers/job-completed')).jobCompleted;
	});
	return trigger!;
}

it('a signed callback starts the flow once, with no request; its replay does not start it again, after a restart neither', async () => {
	const delivery = await deliveryOf(sandbox, 'A sunrise over hills');
	const flow = newFlow();
	const before = sandbox.journal.length;
	expect(await fire(delivery, { secret: true, flow })).toEqual([expect.objectContaining({ status: 'done', confirmedBy: 'signature', videoUrl: expect.stringMatching(/output\.mp4$/) })]);
	expect(sandbox.journal.length).toBe(before);
	expect(await fire(delivery, { secret: true, flow })).toEqual([]);
	expect(await fire(delivery, { secret: true, flow, trigger: await restartedTrigger() })).toEqual([]);
});

it('a forged signature starts nothing', async () => {
	const delivery = await deliveryOf(sandbox, 'A quiet harbour');
	const forged = { ...delivery, body: delivery.body.replace('"done"', '"failed"') };
	expect(await fire(forged, { secret: true })).toEqual([]);
});

it('without a secret, the job is confirmed by lookup; a made-up job starts nothing', async () => {
	const delivery = await deliveryOf(sandbox, 'A field of tulips');
	const flow = newFlow();
	expect(await fire(delivery, { flow })).toEqual([expect.objectContaining({ status: 'done', confirmedBy: 'lookup' })]);
	expect(await fire(delivery, { flow })).toEqual([]);
	const madeUp = { ...delivery, body: JSON.stringify({ ...JSON.parse(delivery.body), id: 'job_made_up', status: 'done' }) };
	expect(await fire(madeUp)).toEqual([]);
});

it('fires for the chosen outcome only', async () => {
	const delivery = await deliveryOf(sandbox, 'Rain on glass [sandbox:job-fails-content-policy]');
	expect(await fire(delivery, { secret: true, outcome: 'done' })).toEqual([]);
	expect(await fire(delivery, { secret: true, outcome: 'failed' })).toEqual([expect.objectContaining({ status: 'failed', errorCode: 'content_policy' })]);
});

it('a video too large for a file of the run still starts the flow, as a link with the reason', async () => {
	const delivery = await deliveryOf(sandbox, 'A long pan [sandbox:large-output]');
	const [started] = await fire(delivery, { secret: true, includeVideoFile: true });
	expect(started).toEqual(expect.objectContaining({ status: 'done', videoUrl: expect.stringMatching(/output\.mp4$/), videoFileSkipped: expect.stringMatching(/over the 10 MB/) }));
	expect(started.videoFile).toBeUndefined();
});

/** Copies handed to one flow's trigger at the same moment: every item is a run of the flow. */
async function firedTogether(copies: ReceivedCallback[], options: { secret?: boolean }) {
	const flow = newFlow();
	return (await Promise.all(copies.map((copy) => fire(copy, { ...options, flow })))).flat();
}

it("the service's own duplicates (same webhook id) arriving together start the flow once, signed or looked up", async () => {
	const copies = await deliveriesOf(sandbox, 'Sent twice [sandbox:callback-duplicate]', 2);
	expect(copies[0].headers['webhook-id']).toBe(copies[1].headers['webhook-id']);
	expect(await firedTogether(copies, { secret: true })).toEqual([expect.objectContaining({ status: 'done', confirmedBy: 'signature' })]);
	expect(await firedTogether(copies, {})).toEqual([expect.objectContaining({ status: 'done', confirmedBy: 'lookup' })]);
});

it('a replay of a delivered outcome under a new webhook id, validly signed, does not start the flow again', async () => {
	const delivery = await deliveryOf(sandbox, 'Sent again with a new id');
	const flow = newFlow();
	expect(await fire(delivery, { secret: true, flow })).toHaveLength(1);
	const timestamp = Math.floor(Date.now() / 1000);
	const resigned = (id: string) => ({
		...delivery,
		headers: { ...delivery.headers, 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': standardWebhookSignature(sandbox.webhookSecret, id, timestamp, delivery.body) },
	});
	expect(await fire(resigned('msg_replayed'), { secret: true, flow })).toEqual([]);
	expect(await fire(resigned('msg_replayed_later'), { secret: true, flow, trigger: await restartedTrigger() })).toEqual([]);
});
