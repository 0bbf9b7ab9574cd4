import { startSandbox, type Sandbox } from '../../sandbox';
import { deliveryOf } from '../support/callbackDelivery';
import { App, authFor, hookBundle, runStep, runWithRpc, zapierRpc } from '../support/zapier/harness';
import { createAppTester } from 'zapier-platform-core';

/**
 * Job Completed: real callbacks from the sandbox, handed to the trigger the way Zapier hands a
 * static hook's request to an app. One tester per test: its cache is where deliveries are remembered.
 */
const SPEED = 40;
let sandbox: Sandbox;

beforeAll(async () => {
	// Signed callbacks, retried, and sent for failed jobs too: docs/api.md's decisions, which this
	// file tests the trigger against (a service that signs none is the lookup path, tested here too).
	sandbox = await startSandbox({ port: 0, speed: SPEED, insecureCallbacks: true, service: 'default' });
});
afterAll(async () => {
	await sandbox.close();
});

const PERFORM = 'triggers.jobCompleted.operation.perform';

it('a signed callback starts the Zap once; its replay does not', async () => {
	const tester = createAppTester(App);
	const delivery = await deliveryOf(sandbox, 'A sunrise over hills');
	const bundle = { authData: authFor(sandbox.url, sandbox.keys.premium, { webhookSecret: sandbox.webhookSecret }), inputData: {}, ...hookBundle(delivery) };
	const lookups = sandbox.journal.length;
	const first = (await runStep(PERFORM, bundle, tester)) as Array<Record<string, unknown>>;
	expect(first).toEqual([expect.objectContaining({ status: 'done', confirmedBy: 'signature', videoUrl: expect.stringMatching(/output\.mp4$/) })]);
	// Signed: no request at all.
	expect(sandbox.journal.length).toBe(lookups);
	expect(await runStep(PERFORM, bundle, tester)).toEqual([]);
});

/** A delivery the trigger refuses: the run stops as halted, with the reason in the Zap's history. */
async function halted(bundle: Record<string, unknown>): Promise<string> {
	const error = (await runStep(PERFORM, bundle, createAppTester(App)).then(
		() => undefined,
		(thrown: Error) => thrown,
	)) as Error | undefined;
	expect(error?.name).toBe('HaltedError');
	return String(error?.message);
}

it('a forged signature never starts the Zap, and says why in the Zap history', async () => {
	const delivery = await deliveryOf(sandbox, 'A quiet harbour');
	const forged = { ...delivery, body: delivery.body.replace('"done"', '"failed"') };
	const bundle = { authData: authFor(sandbox.url, sandbox.keys.premium, { webhookSecret: sandbox.webhookSecret }), inputData: {}, ...hookBundle(forged) };
	expect(await halted(bundle)).toMatch(/callback not accepted \(job job_[\w-]+\): Signature rejected/);
});

it('a delivery signed too long ago is refused with the reason, not dropped silently', async () => {
	const delivery = await deliveryOf(sandbox, 'An old postcard');
	const old = { ...delivery, headers: { ...delivery.headers, 'webhook-timestamp': String(Math.floor(Date.now() / 1000) - 3600) } };
	const bundle = { authData: authFor(sandbox.url, sandbox.keys.premium, { webhookSecret: sandbox.webhookSecret }), inputData: {}, ...hookBundle(old) };
	// 3601 when the second turns between signing and checking.
	expect(await halted(bundle)).toMatch(/Signature rejected: the delivery is 360[01] s old/);
});

it('the editor\'s test of the trigger lists a sample job (performList)', async () => {
	const listed = (await runStep('triggers.jobCompleted.operation.performList', { authData: authFor(sandbox.url, sandbox.keys.premium), inputData: {} })) as unknown[];
	expect(listed).toEqual([expect.objectContaining({ id: expect.any(String), jobId: expect.any(String), status: 'done', videoUrl: expect.any(String) })]);
});

it('without a secret, the job is confirmed by lookup, and a made-up job is ignored', async () => {
	const tester = createAppTester(App);
	const delivery = await deliveryOf(sandbox, 'A field of tulips');
	const auth = authFor(sandbox.url, sandbox.keys.premium);
	const confirmed = (await runStep(PERFORM, { authData: auth, inputData: {}, ...hookBundle(delivery) }, tester)) as Array<Record<string, unknown>>;
	expect(confirmed).toEqual([expect.objectContaining({ status: 'done', confirmedBy: 'lookup' })]);
	const madeUp = { ...delivery, body: JSON.stringify({ ...JSON.parse(delivery.body), id: 'job_made_up', status: 'done' }) };
	expect(await halted({ authData: auth, inputData: {}, ...hookBundle(madeUp) })).toMatch(/No job job_made_up exists/);
});

it('fires for the chosen outcome only: a failed job, with Outcome "Done only" and "Failed only"', async () => {
	const delivery = await deliveryOf(sandbox, 'Rain on glass [sandbox:job-fails-content-policy]');
	const auth = authFor(sandbox.url, sandbox.keys.premium, { webhookSecret: sandbox.webhookSecret });
	expect(await runStep(PERFORM, { authData: auth, inputData: { outcome: 'done' }, ...hookBundle(delivery) }, createAppTester(App))).toEqual([]);
	const failed = (await runStep(PERFORM, { authData: auth, inputData: { outcome: 'failed' }, ...hookBundle(delivery) }, createAppTester(App))) as Array<Record<string, unknown>>;
	expect(failed).toEqual([expect.objectContaining({ status: 'failed', errorCode: 'content_policy', error: expect.any(String) })]);
});

it("two deliveries of one callback arriving at once start the Zap once (Zapier's cache: scoped entries, nx writes)", async () => {
	const rpc = await zapierRpc();
	try {
		const delivery = await deliveryOf(sandbox, 'Two at once');
		const bundle = { authData: authFor(sandbox.url, sandbox.keys.premium, { webhookSecret: sandbox.webhookSecret }), inputData: {}, ...hookBundle(delivery) };
		const outputs = await Promise.all([runWithRpc(PERFORM, bundle, rpc.url), runWithRpc(PERFORM, bundle, rpc.url)]);
		expect(outputs.map((output) => (output.results as unknown[]).length).sort()).toEqual([0, 1]);
		// Later, the service's retry of the same delivery finds the entry with the scope it was written with.
		expect((await runWithRpc(PERFORM, bundle, rpc.url)).results).toEqual([]);
		expect([...rpc.entries.keys()]).toEqual([expect.stringMatching(/^auth\|omni-video:delivery:msg_/)]);
		expect(new Set(rpc.scopes)).toEqual(new Set(['zcache_get:auth', 'zcache_set:auth']));
	} finally {
		await rpc.close();
	}
});
