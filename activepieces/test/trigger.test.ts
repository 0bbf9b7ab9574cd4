/* eslint-disable @n8n/community-nodes/no-restricted-imports -- the Activepieces piece: n8n's rules for community nodes do not apply to it */
import { startSandbox, type Sandbox } from '../../sandbox';
import { standardWebhookSignature } from '../../sandbox/signing';
import type { ReceivedCallback } from '../../test/support/receiver';
import { deliveriesOf, deliveryOf } from '../../test/support/callbackDelivery';
import { EngineServer, installPiece, uninstallPiece, loadPiece, runTriggerHook, type InstalledPiece } from './engine';

/**
 * Job Completed as Activepieces' engine drives a webhook trigger (./engine.ts): enabled once, then
 * run with each request the sandbox really sent to the webhook (its signed callbacks), tested in
 * the builder, disabled; each hook and each webhook in an engine process of its own, the flow's
 * store on the server.
 */
jest.setTimeout(120_000);

let sandbox: Sandbox;
/**
 * The service on docs/api.md's decisions whatever the reading under test (OMNI_SANDBOX_SERVICE):
 * signed callbacks, retried deliveries, callbacks for failed jobs. Tests of those decisions use
 * it; the rest use `sandbox`, on the reading under test (on the spec's: unsigned callbacks sent
 * once, none for a failed job, each confirmed by lookup).
 */
let decided: Sandbox;
let installed: InstalledPiece;

beforeAll(async () => {
	sandbox = await startSandbox({ port: 0, speed: 40, insecureCallbacks: true });
	decided = await startSandbox({ port: 0, speed: 40, insecureCallbacks: true, service: 'default' });
	installed = installPiece();
});
afterAll(async () => {
	await sandbox.close();
	await decided.close();
	uninstallPiece(installed);
});

/** A flow with a Job Completed trigger, enabled: its id, and the server that keeps its store. */
interface Flow {
	id: string;
	server: EngineServer;
}
let flows = 0;

/** `on`: the service the flow's connection points at (`sandbox` unless told). */
interface Options {
	secret?: boolean;
	outcome?: string;
	includeVideoFile?: boolean;
	on?: Sandbox;
}

const input = (options: Options) => ({
	auth: { type: 'CUSTOM_AUTH', props: connection(options.on ?? sandbox, options.secret) },
	outcome: options.outcome,
	includeVideoFile: options.includeVideoFile,
});

function connection(service: Sandbox, secret?: boolean) {
	return { apiKey: service.keys.premium, baseUrl: service.url, plan: 'premium', webhookSecret: secret ? service.webhookSecret : undefined };
}

/** Enabling is the same for every flow (nothing to register): its own engine process is shown once, below. */
async function enabledFlow(options: Options = {}): Promise<Flow> {
	const flow = { id: `flow_${++flows}`, server: new EngineServer() };
	await runTriggerHook(loadPiece(installed), flow.server, { triggerName: 'job_completed', hook: 'ON_ENABLE', flowId: flow.id, input: input(options) });
	return flow;
}

/** The request the sandbox sent, as the server hands a webhook's request to the trigger. */
const payloadOf = (delivery: ReceivedCallback) => ({ method: 'POST', headers: delivery.headers, body: JSON.parse(delivery.body) as unknown, rawBody: delivery.body, queryParams: {} });

/** One delivery to the flow's webhook: the trigger's run (in an engine process of its own), whose items each start a run of the flow. */
async function fire(delivery: ReceivedCallback, options: Options & { flow?: Flow } = {}) {
	const flow = options.flow ?? (await enabledFlow(options));
	return (await runTriggerHook(installed, flow.server, { triggerName: 'job_completed', hook: 'RUN', flowId: flow.id, input: input(options), payload: payloadOf(delivery) })) as Array<Record<string, unknown>>;
}

it("shows its webhook URL where its instructions tell users to copy it (the builder fills {{webhookUrl}} in a MarkDown property)", () => {
	const piece = loadPiece(installed);
	// Property.MarkDown keeps its text as the property's description.
	const { instructions } = piece.metadata().triggers.job_completed.props as unknown as { instructions: { type: string; description: string } };
	expect(instructions.type).toBe('MARKDOWN');
	expect(instructions.description).toContain('{{webhookUrl}}');
	expect(instructions.description.indexOf('{{webhookUrl}}')).toBeLessThan(instructions.description.indexOf('Copy'));
});

it('is enabled and disabled with nothing to register, and its test in the builder shows a sample delivery', async () => {
	const flow = await enabledFlow();
	const before = sandbox.journal.length;
	await runTriggerHook(installed, flow.server, { triggerName: 'job_completed', hook: 'ON_ENABLE', flowId: flow.id, input: input({}) });
	const sample = await runTriggerHook(installed, flow.server, { triggerName: 'job_completed', hook: 'TEST', flowId: flow.id, input: input({}) });
	expect(sample).toEqual([expect.objectContaining({ jobId: expect.any(String), status: 'done', confirmedBy: 'signature' })]);
	await runTriggerHook(installed, flow.server, { triggerName: 'job_completed', hook: 'ON_DISABLE', flowId: flow.id, input: input({}) });
	expect(sandbox.journal.length).toBe(before);
	expect(flow.server.storeEntries.size).toBe(0);
});

it('a signed callback starts the flow once, with no request; its replay does not start it again, after a restart neither', async () => {
	// Signed callbacks are docs/api.md's decision: on the spec's reading, see the lookup test below.
	const on = decided;
	const delivery = await deliveryOf(on, 'A sunrise over hills');
	const flow = await enabledFlow({ on });
	const before = on.journal.length;
	expect(await fire(delivery, { secret: true, flow, on })).toEqual([expect.objectContaining({ status: 'done', confirmedBy: 'signature', videoUrl: expect.stringMatching(/output\.mp4$/) })]);
	expect(on.journal.length).toBe(before);
	expect(await fire(delivery, { secret: true, flow, on })).toEqual([]);
	expect(await fire(delivery, { secret: true, flow, on })).toEqual([]);
});

it('a forged signature starts nothing', async () => {
	// A signed callback altered (docs/api.md's signing): on the spec's reading a callback has no signature to forge.
	const delivery = await deliveryOf(decided, 'A quiet harbour');
	expect(delivery.headers['webhook-signature']).toEqual(expect.any(String));
	const forged = { ...delivery, body: delivery.body.replace('"done"', '"failed"') };
	expect(await fire(forged, { secret: true, on: decided })).toEqual([]);
});

it('without a secret, the job is confirmed by lookup; a made-up job starts nothing', async () => {
	const delivery = await deliveryOf(sandbox, 'A field of tulips');
	const flow = await enabledFlow();
	expect(await fire(delivery, { flow })).toEqual([expect.objectContaining({ status: 'done', confirmedBy: 'lookup' })]);
	expect(await fire(delivery, { flow })).toEqual([]);
	const madeUp = { ...delivery, body: JSON.stringify({ ...JSON.parse(delivery.body), id: 'job_made_up', status: 'done' }) };
	expect(await fire(madeUp)).toEqual([]);
});

it('fires for the chosen outcome only', async () => {
	// A failed job's callback is docs/api.md's decision (the spec shows callbacks for done jobs only).
	const failed = await deliveryOf(decided, 'Rain on glass [sandbox:job-fails-content-policy]');
	expect(await fire(failed, { secret: true, outcome: 'done', on: decided })).toEqual([]);
	expect(await fire(failed, { secret: true, outcome: 'failed', on: decided })).toEqual([expect.objectContaining({ status: 'failed', errorCode: 'content_policy' })]);
	// A done job's callback on the reading under test, confirmed by lookup.
	const done = await deliveryOf(sandbox, 'Sun on glass');
	expect(await fire(done, { outcome: 'failed' })).toEqual([]);
	expect(await fire(done, { outcome: 'done' })).toEqual([expect.objectContaining({ status: 'done', confirmedBy: 'lookup' })]);
});

it('a video too large for a file of the run still starts the flow, as a link with the reason (signed, or looked up on the reading under test)', async () => {
	for (const [on, secret] of [
		[decided, true],
		[sandbox, false],
	] as const) {
		const delivery = await deliveryOf(on, 'A long pan [sandbox:large-output]');
		const started = await fire(delivery, { secret, includeVideoFile: true, on });
		expect(started).toEqual([expect.objectContaining({ status: 'done', confirmedBy: secret ? 'signature' : 'lookup', videoUrl: expect.stringMatching(/output\.mp4$/), videoFileSkipped: expect.stringMatching(/over the 10 MB/) })]);
		expect(started[0].videoFile).toBeUndefined();
	}
});

/** Copies handed to one flow's trigger at the same moment: every item is a run of the flow. */
async function firedTogether(copies: ReceivedCallback[], options: Options) {
	const flow = await enabledFlow(options);
	return (await Promise.all(copies.map((copy) => fire(copy, { ...options, flow })))).flat();
}

it("the service's own duplicates (same webhook id) arriving together start the flow once, signed or looked up", async () => {
	// Signed copies with one webhook id: docs/api.md's decision.
	const signed = await deliveriesOf(decided, 'Sent twice [sandbox:callback-duplicate]', 2);
	expect(signed[0].headers['webhook-id']).toEqual(expect.any(String));
	expect(signed[0].headers['webhook-id']).toBe(signed[1].headers['webhook-id']);
	expect(await firedTogether(signed, { secret: true, on: decided })).toEqual([expect.objectContaining({ status: 'done', confirmedBy: 'signature' })]);
	expect(await firedTogether(signed, { on: decided })).toEqual([expect.objectContaining({ status: 'done', confirmedBy: 'lookup' })]);
	// Two copies on the reading under test (unsigned on the spec's), each confirmed by lookup.
	const copies = await deliveriesOf(sandbox, 'Sent twice again [sandbox:callback-duplicate]', 2);
	expect(copies[1].body).toBe(copies[0].body);
	expect(await firedTogether(copies, {})).toEqual([expect.objectContaining({ status: 'done', confirmedBy: 'lookup' })]);
});

it('a replay of a delivered outcome under a new webhook id, validly signed, does not start the flow again', async () => {
	// Signed callbacks: docs/api.md's decision.
	const on = decided;
	const delivery = await deliveryOf(on, 'Sent again with a new id');
	const flow = await enabledFlow({ on });
	expect(await fire(delivery, { secret: true, flow, on })).toHaveLength(1);
	const timestamp = Math.floor(Date.now() / 1000);
	const resigned = (id: string) => ({
		...delivery,
		headers: { ...delivery.headers, 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': standardWebhookSignature(on.webhookSecret, id, timestamp, delivery.body) },
	});
	expect(await fire(resigned('msg_replayed'), { secret: true, flow, on })).toEqual([]);
	expect(await fire(resigned('msg_replayed_later'), { secret: true, flow, on })).toEqual([]);
});

/** The delivery as the service signed it `ageSeconds` ago, whether or not the signature is right. */
function signedAgo(delivery: ReceivedCallback, ageSeconds: number, secret = sandbox.webhookSecret): ReceivedCallback {
	const timestamp = Math.floor(Date.now() / 1000) - ageSeconds;
	const id = delivery.headers['webhook-id'] ?? 'msg_late';
	return { ...delivery, headers: { ...delivery.headers, 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': standardWebhookSignature(secret, id, timestamp, delivery.body) } };
}

it("a signed callback held past the signature's 300 s (Activepieces answered the service before running the trigger) is confirmed by lookup and starts the flow once", async () => {
	const delivery = await deliveryOf(sandbox, 'Held in a queue backlog');
	const flow = await enabledFlow();
	const late = signedAgo(delivery, 900);
	const before = sandbox.journal.length;
	expect(await fire(late, { secret: true, flow })).toEqual([expect.objectContaining({ status: 'done', confirmedBy: 'lookup' })]);
	expect(sandbox.journal.slice(before).map((entry) => entry.path)).toEqual([`/api/v1/jobs/${String(JSON.parse(delivery.body).id)}`]);
	expect(await fire(late, { secret: true, flow })).toEqual([]);
});

it('a stale callback signed with another secret is still refused, with no lookup', async () => {
	const delivery = await deliveryOf(sandbox, 'An old forgery');
	const before = sandbox.journal.length;
	expect(await fire(signedAgo(delivery, 900, 'whsec_' + Buffer.from('not the secret at all, 32 bytes!').toString('base64')), { secret: true })).toEqual([]);
	expect(sandbox.journal.length).toBe(before);
});

it('copies of one callback run by different engine processes at the same moment start the flow once (the flow store claim), signed or looked up', async () => {
	// Signed copies on docs/api.md's decision; looked-up copies on the reading under test.
	for (const [on, secret] of [
		[decided, true],
		[sandbox, false],
	] as const) {
		const delivery = await deliveryOf(on, `Two processes, one start (${secret ? 'signed' : 'looked up'})`);
		const flow = await enabledFlow({ secret, on });
		// The three processes read whether the outcome was seen at the same moment.
		flow.server.gatherStoreReads('omni-video:outcome:', 3);
		const started = (await Promise.all([fire(delivery, { secret, flow, on }), fire(delivery, { secret, flow, on }), fire(delivery, { secret, flow, on })])).flat();
		expect(started).toEqual([expect.objectContaining({ status: 'done', confirmedBy: secret ? 'signature' : 'lookup' })]);
		expect([...flow.server.storeEntries.keys()].filter((key) => key.includes('omni-video:claim:'))).toEqual([]);
	}
});
