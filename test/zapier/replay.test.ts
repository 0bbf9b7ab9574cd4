import { startSandbox, type Sandbox } from '../../sandbox';
import { startReceiver } from '../support/receiver';
import { authFor, runStep, runWithCallbackUrl, zapierErrorFields } from '../support/zapier/harness';

/**
 * Replays and Zapier's autoreplay never create a second job. A replay runs the step again with the
 * same input and a new callback URL; Zapier's cache (its own test stand-in, shared by the two runs)
 * is where the first attempt is remembered.
 */
const SPEED = 40;
const PERFORM = 'creates.generateVideo.operation.perform';
let sandbox: Sandbox;

beforeAll(async () => {
	sandbox = await startSandbox({ port: 0, speed: SPEED, insecureCallbacks: true });
});
afterAll(async () => {
	await sandbox.close();
});

const creates = () => sandbox.journal.filter((entry) => entry.path === '/api/v1/generate');

it('a replayed step gets the job of the first run instead of creating another', async () => {
	const receiver = await startReceiver();
	try {
		const cache = {};
		const bundle = { authData: authFor(sandbox.url, sandbox.keys.premium), inputData: { prompt: 'A replayed sunrise', resolution: '720P', duration: 4 } };
		const jobsBefore = sandbox.jobs.all.size;
		const first = await runWithCallbackUrl(PERFORM, bundle, `${receiver.url}/first-run`, cache);
		expect(first.status).toBe('CALLBACK');
		const jobId = (first.results as { jobId: string }).jobId;
		const sent = creates().length;

		const replay = await runWithCallbackUrl(PERFORM, bundle, `${receiver.url}/replay`, cache);
		// The replay does not park on its own callback URL: it picks up the job and waits for it in the run.
		expect(replay.status).not.toBe('CALLBACK');
		expect(replay.results).toMatchObject({ jobId, status: 'done' });
		expect(creates().length).toBe(sent);
		expect(sandbox.jobs.all.size - jobsBefore).toBe(1);
	} finally {
		await receiver.close();
	}
}, 40_000);

it('a create whose answer was lost is replayed with the same request, and the service answers with the same job', async () => {
	const key = 'omni_test_lost_answer';
	const flaky = sandbox.accounts.addKey({ key, account: 'acct_premium', label: 'answer lost', scenarios: ['reset-after-accept'] });
	const receiver = await startReceiver();
	try {
		const cache = {};
		const bundle = { authData: authFor(sandbox.url, key), inputData: { prompt: 'A lost answer', resolution: '720P', duration: 4 } };
		const jobsBefore = sandbox.jobs.all.size;
		const first = await runWithCallbackUrl(PERFORM, bundle, `${receiver.url}/first-run`, cache).then(
			() => undefined,
			(thrown: Error) => thrown,
		);
		const { message } = zapierErrorFields(first);
		expect(message).toMatch(/connection .* was cut/);
		expect(message).toMatch(/Replay this step/);
		expect(message).not.toMatch(/idempotency key/);
		expect(sandbox.jobs.all.size - jobsBefore).toBe(1);

		flaky.scenarios.length = 0;
		const replay = await runWithCallbackUrl(PERFORM, bundle, `${receiver.url}/replay`, cache);
		const [original] = [...sandbox.jobs.all.values()].slice(-1);
		expect(replay.results).toMatchObject({ jobId: original.id, status: 'done' });
		expect(sandbox.jobs.all.size - jobsBefore).toBe(1);
		// The same body went out again, with Zapier's first callback URL: the service replayed its answer.
		const [lost, resent] = creates().slice(-2);
		expect([lost.idempotencyKey, lost.status]).toEqual([resent.idempotencyKey, 'reset']);
		expect(resent.status).toBe(202);
	} finally {
		await receiver.close();
	}
}, 40_000);

it('a step refused before anything was created starts afresh on replay', async () => {
	const receiver = await startReceiver();
	try {
		const cache = {};
		const inputData = { prompt: 'Paid once', resolution: '4K', duration: 10 };
		const broke = await runWithCallbackUrl(PERFORM, { authData: authFor(sandbox.url, sandbox.keys.budget), inputData }, receiver.url, cache).then(
			() => undefined,
			(thrown: Error) => thrown,
		);
		expect(zapierErrorFields(broke).status).toBe(402);
		// Nothing kept: the replay asks Zapier for its own callback URL and parks as a first run does.
		expect(Object.keys(cache)).toEqual([]);
	} finally {
		await receiver.close();
	}
});

it('Wait for the Video: No returns the queued job at once, with the given callback URL; its replay returns the same job', async () => {
	const receiver = await startReceiver();
	try {
		const cache = {};
		const bundle = {
			authData: authFor(sandbox.url, sandbox.keys.premium),
			inputData: { prompt: 'Do not wait', resolution: '720P', duration: 4, waitForVideo: 'no', callbackUrl: receiver.url },
		};
		const first = await runWithCallbackUrl(PERFORM, bundle, 'https://hooks.zapier.example/never-used', cache);
		expect(first.status).not.toBe('CALLBACK');
		expect(first.results).toMatchObject({ status: 'queued', videoUrl: null });
		const jobId = (first.results as { jobId: string }).jobId;
		expect(sandbox.jobs.all.get(jobId)?.body).toMatchObject({ callbackUrl: receiver.url });
		const sent = creates().length;
		const replay = await runWithCallbackUrl(PERFORM, bundle, 'https://hooks.zapier.example/never-used', cache);
		expect(replay.results).toMatchObject({ jobId });
		expect(creates().length).toBe(sent);
		const [delivery] = await receiver.waitFor(1, 15_000);
		expect(JSON.parse(delivery.body)).toMatchObject({ id: jobId, status: 'done' });
	} finally {
		await receiver.close();
	}
}, 40_000);

it('Run Reference makes two runs with the same prompt two jobs', async () => {
	const auth = authFor(sandbox.url, sandbox.keys.premium);
	const run = (runReference: string) =>
		runStep(PERFORM, { authData: auth, inputData: { prompt: 'Same prompt, new run', waitForVideo: 'no', runReference } }) as Promise<{ jobId: string }>;
	const [a, b] = [await run('row 1'), await run('row 2')];
	expect(a.jobId).not.toBe(b.jobId);
});

it('a replay whose job is still rendering ends throttled inside the budget, to look again later; still one job', async () => {
	const slow = await startSandbox({ port: 0, speed: 1, insecureCallbacks: true });
	const receiver = await startReceiver();
	try {
		const cache = {};
		const bundle = { authData: authFor(slow.url, slow.keys.premium), inputData: { prompt: 'A long render', resolution: '4K', duration: 10 } };
		await runWithCallbackUrl(PERFORM, bundle, `${receiver.url}/first-run`, cache);
		const started = Date.now();
		const replay = await runWithCallbackUrl(PERFORM, bundle, `${receiver.url}/replay`, cache).then(
			() => undefined,
			(thrown: Error) => thrown,
		);
		expect(Date.now() - started).toBeLessThan(30_000);
		expect(replay?.name).toBe('ThrottledError');
		expect(zapierErrorFields(replay).message).toMatch(/created by an earlier attempt of this step, is still (queued|running)/);
		expect(slow.jobs.all.size).toBe(1);
	} finally {
		await receiver.close();
		await slow.close();
	}
}, 45_000);
