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

/**
 * A create whose answer was lost may have made a paid job. The spec never mentions Idempotency-Key,
 * so resending it (as this step did, counting on the service to replay its answer) may pay twice:
 * on both readings of the service the replay sends nothing and says what to check.
 */
describe.each(['default', 'spec'] as const)('on the %s service, a create whose outcome is unknown', (service) => {
	let own: Sandbox;
	beforeAll(async () => {
		own = await startSandbox({ port: 0, speed: SPEED, insecureCallbacks: true, service, holdMs: 1_500 });
	});
	afterAll(() => own.close());
	beforeEach(() => own.reset());

	it.each(['error-500-after-create', 'reset-after-accept', 'timeout-after-accept'])('(%s) is never sent again: the attempt and its replays name what to check', async (scenario) => {
		const key = `omni_test_lost_${scenario}`;
		const flaky = own.accounts.addKey({ key, account: 'acct_premium', label: scenario, scenarios: [scenario] });
		const cache = {};
		const prompt = `A lost answer (${scenario})`;
		const bundle = { authData: authFor(own.url, key), inputData: { prompt, resolution: '720P', duration: 4 } };
		const createsSent = () => own.journal.filter((entry) => entry.path === '/api/v1/generate').length;
		const failed = (run: Promise<unknown>) => run.then(() => undefined, (thrown: Error) => thrown);

		const first = zapierErrorFields(await failed(runWithCallbackUrl(PERFORM, bundle, 'https://hooks.zapier.example/first-run', cache)));
		expect(own.jobs.all.size).toBe(1);
		const [job] = [...own.jobs.all.values()];
		const idempotencyKey = own.journal.find((entry) => entry.path === '/api/v1/generate')?.idempotencyKey;

		// Manual replay and autoreplay alike, the fault gone: nothing is sent, the same is said.
		flaky.scenarios.length = 0;
		const sent = createsSent();
		const replays = [];
		for (const callbackUrl of ['https://hooks.zapier.example/replay', 'https://hooks.zapier.example/autoreplay']) {
			replays.push(zapierErrorFields(await failed(runWithCallbackUrl(PERFORM, bundle, callbackUrl, cache))));
		}
		expect([...own.jobs.all.values()].map((made) => made.id)).toEqual([job.id]);
		expect(createsSent()).toBe(sent);

		expect(first.message).toMatch(/may have made \(and charged\) the job/);
		expect(first.message).not.toMatch(/Replay this step|the replay sends the same request/);
		expect(first.message).toContain(`idempotency key ${idempotencyKey}`);
		expect(first.message).toContain(JSON.stringify(prompt));
		expect(first.message).toMatch(/created at \d{4}-\d\d-\d\dT/);
		for (const replay of replays) {
			expect(replay).toMatchObject({ code: 'outcome_unknown' });
			expect(replay.message).toMatch(/An earlier attempt of this step sent its create at .* Nothing is sent again/);
			expect(replay.message).toContain(`idempotency key ${idempotencyKey}`);
			expect(replay.message).toContain(JSON.stringify(prompt));
		}
	}, 60_000);
});

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

it('Wait for the Video: No returns the queued job at once, with the given callback URL', async () => {
	const receiver = await startReceiver();
	try {
		const bundle = {
			authData: authFor(sandbox.url, sandbox.keys.premium),
			inputData: { prompt: 'Do not wait', resolution: '720P', duration: 4, waitForVideo: 'no', callbackUrl: receiver.url },
		};
		const first = await runWithCallbackUrl(PERFORM, bundle, 'https://hooks.zapier.example/never-used', {});
		expect(first.status).not.toBe('CALLBACK');
		expect(first.results).toMatchObject({ status: 'queued', videoUrl: null });
		const jobId = (first.results as { jobId: string }).jobId;
		expect(sandbox.jobs.all.get(jobId)?.body).toMatchObject({ callbackUrl: receiver.url });
		const [delivery] = await receiver.waitFor(1, 15_000);
		expect(JSON.parse(delivery.body)).toMatchObject({ id: jobId, status: 'done' });
	} finally {
		await receiver.close();
	}
}, 40_000);

/**
 * Zapier replays a step only when it errored or was halted, never one that returned its output. So
 * the same input seen again after the step ended well is a new Zap run (a new sheet row with the
 * same prompt, "regenerate" from a second Zap), and it makes a new video, as a new execution does
 * on n8n and a new run on Activepieces; while the step has not ended well (parked, errored), the
 * same input is a replay and gets the job already made. On both readings of the service: on the
 * default one the new run must not send the earlier run's Idempotency-Key (the service would
 * replay the earlier job).
 */
describe.each(['default', 'spec'] as const)('on the %s service, the same input on a new run', (service) => {
	let own: Sandbox;
	beforeAll(async () => {
		own = await startSandbox({ port: 0, speed: SPEED, insecureCallbacks: true, service });
	});
	afterAll(() => own.close());
	const ownCreates = () => own.journal.filter((entry) => entry.path === '/api/v1/generate');

	it('after a run that returned the queued job (Wait: No) makes a new job', async () => {
		const cache = {};
		const bundle = { authData: authFor(own.url, own.keys.premium), inputData: { prompt: 'A new run, not a replay', resolution: '720P', duration: 4, waitForVideo: 'no' } };
		const first = await runWithCallbackUrl(PERFORM, bundle, 'https://hooks.zapier.example/run-1', cache);
		const second = await runWithCallbackUrl(PERFORM, bundle, 'https://hooks.zapier.example/run-2', cache);
		const third = await runWithCallbackUrl(PERFORM, bundle, 'https://hooks.zapier.example/run-3', cache);
		const ids = [first, second, third].map((run) => (run.results as { jobId: string }).jobId);
		expect(new Set(ids).size).toBe(3);
		// Three keys, so that a service honouring keys does not replay the first run's job either.
		expect(new Set(ownCreates().map((entry) => entry.idempotencyKey)).size).toBe(3);
		expect(ownCreates()).toHaveLength(3);
	}, 40_000);

	it('after a parked run resumed with its video makes a new job; before that, it is a replay and gets the parked job', async () => {
		const receiver = await startReceiver();
		try {
			const cache = {};
			const bundle = { authData: authFor(own.url, own.keys.premium), inputData: { prompt: 'Parked, resumed, then run again', resolution: '720P', duration: 4 } };
			const parked = await runWithCallbackUrl(PERFORM, bundle, `${receiver.url}/run-1`, cache);
			expect(parked.status).toBe('CALLBACK');
			const jobId = (parked.results as { jobId: string }).jobId;
			const sent = ownCreates().length;
			// Zapier replays the step (its resume errored, say) before the run ended well: the same job, no create.
			const replay = await runWithCallbackUrl(PERFORM, bundle, `${receiver.url}/replay`, cache);
			expect(replay.results).toMatchObject({ jobId, status: 'done' });
			expect(ownCreates().length).toBe(sent);

			const resumed = await runWithCallbackUrl(
				'creates.generateVideo.operation.performResume',
				{ ...bundle, outputData: parked.results as Record<string, unknown>, cleanedRequest: { id: jobId } },
				`${receiver.url}/unused`,
				cache,
			);
			expect(resumed.results).toMatchObject({ jobId, status: 'done' });
			expect(resumed.results).not.toHaveProperty('attempt');

			const nextRun = await runWithCallbackUrl(PERFORM, bundle, `${receiver.url}/run-2`, cache);
			expect(nextRun.status).toBe('CALLBACK');
			expect((nextRun.results as { jobId: string }).jobId).not.toBe(jobId);
			expect(ownCreates().length).toBe(sent + 1);
		} finally {
			await receiver.close();
		}
	}, 40_000);
});

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

/**
 * The service refusing the callback URL (Zapier's own, here a loopback address that a service calling
 * back over https:// only refuses): the step cannot poll instead as n8n and Activepieces do, since a
 * render outlasts Zapier's 30 s and asking for the callback URL has already set the step to wait. So
 * it fails at once, with the service's reason and nothing made; its replay starts afresh.
 */
it('a callback URL the service refuses fails the step with the reason, nothing made; no parked step waits for nothing', async () => {
	const strict = await startSandbox({ port: 0, speed: SPEED });
	try {
		const bundle = { authData: authFor(strict.url, strict.keys.premium), inputData: { prompt: 'A refused callback URL', resolution: '720P', duration: 4 } };
		const cache = {};
		const refused = await runWithCallbackUrl(PERFORM, bundle, 'http://127.0.0.1:9/zapier-hook', cache).then(
			(output) => output,
			(thrown: Error) => thrown,
		);
		expect(refused).toBeInstanceOf(Error);
		expect(zapierErrorFields(refused as Error).message).toMatch(/callback/i);
		expect(strict.jobs.all.size).toBe(0);
		const replay = await runWithCallbackUrl(PERFORM, bundle, 'http://127.0.0.1:9/zapier-hook-2', cache).catch((thrown: Error) => thrown);
		expect(zapierErrorFields(replay as Error).message).not.toMatch(/outcome|unknown/i);
		expect(strict.journal.filter((entry) => entry.path === '/api/v1/generate').map((entry) => entry.status)).toEqual([400, 400]);
	} finally {
		await strict.close();
	}
}, 30_000);
