import { startSandbox, type Sandbox } from '../../sandbox';
import { authFor, runStep, runWithCallbackUrl, silentServer, timed, zapierErrorFields } from '../support/zapier/harness';
import { startReceiver } from '../support/receiver';

/**
 * Zapier ends a step after 30 s. Driven through Zapier's own handler in one warm process, no step
 * runs past that: a saturated key ends at once with ThrottledError and the real delay (nothing
 * sent), and an API that never answers ends inside the budget. Times are printed.
 */
const ZAPIER_STEP_LIMIT_MS = 30_000;
let sandbox: Sandbox;

beforeAll(async () => {
	sandbox = await startSandbox({ port: 0, insecureCallbacks: true });
});
afterAll(async () => {
	await sandbox.close();
});

// eslint-disable-next-line no-console -- the measured times are part of what these tests report
const report = (what: string, ms: number) => console.log(`${what}: ${ms} ms`);

it('a sixth Generate Video on a Pro key with five jobs running ends at once, throttled with the real delay, nothing sent', async () => {
	const receiver = await startReceiver();
	try {
		const auth = authFor(sandbox.url, sandbox.keys.pro, { plan: 'pro' });
		for (let i = 0; i < 5; i++) {
			const parked = await runWithCallbackUrl(
				'creates.generateVideo.operation.perform',
				{ authData: auth, inputData: { prompt: `Saturating job ${i}`, resolution: '4K', duration: 10 } },
				receiver.url,
			);
			expect(parked.status).toBe('CALLBACK');
		}
		const creates = sandbox.journal.filter((entry) => entry.path === '/api/v1/generate').length;
		const sixth = await timed(() =>
			runWithCallbackUrl(
				'creates.generateVideo.operation.perform',
				{ authData: auth, inputData: { prompt: 'The sixth job', resolution: '4K', duration: 10 } },
				receiver.url,
			),
		);
		report('sixth Generate Video on a saturated Pro key', sixth.ms);
		expect(sixth.error?.name).toBe('ThrottledError');
		const { message, delay } = zapierErrorFields(sixth.error);
		expect(delay).toBeGreaterThan(20);
		expect(message).toMatch(new RegExp(`in ${delay} s`));
		expect(sixth.ms).toBeLessThan(ZAPIER_STEP_LIMIT_MS);
		expect(sandbox.journal.filter((entry) => entry.path === '/api/v1/generate').length).toBe(creates);
	} finally {
		await receiver.close();
	}
}, 60_000);

it("Find Job on a key whose minute window is used up ends at once, throttled until the window frees", async () => {
	const key = 'omni_test_busy_minute';
	sandbox.accounts.addKey({ key, account: 'acct_pro', label: 'busy minute' });
	const auth = authFor(sandbox.url, key, { plan: 'pro' });
	const lookups = () => sandbox.journal.filter((entry) => entry.path.startsWith('/api/v1/jobs/job_look_')).length;
	let next: Awaited<ReturnType<typeof timed>> = { ms: 0 };
	// Pro allows 30 a minute: within 31 lookups one must be throttled.
	for (let i = 0; i <= 30 && !next.error; i++) {
		const sent = lookups();
		next = await timed(() => runStep('searches.findJob.operation.perform', { authData: auth, inputData: { jobId: `job_look_${i}` } }));
		if (next.error) expect(lookups()).toBe(sent);
		else expect(next.value).toEqual([]);
	}
	report('Find Job over the minute window', next.ms);
	expect(next.error?.name).toBe('ThrottledError');
	expect(zapierErrorFields(next.error).delay).toBeGreaterThan(20);
	expect(zapierErrorFields(next.error).message).toMatch(/nothing was sent/);
	expect(next.ms).toBeLessThan(ZAPIER_STEP_LIMIT_MS);
}, 60_000);

describe('an API that accepts connections and never answers', () => {
	it('Find Job, Generate Video and the connection test each end inside the budget, saying what happened', async () => {
		const silent = await silentServer();
		try {
			const auth = authFor(silent.url, 'omni_test_any', { plan: 'pro' });
			const [find, generate, test] = await Promise.all([
				timed(() => runStep('searches.findJob.operation.perform', { authData: auth, inputData: { jobId: 'job_waiting' } })),
				timed(() =>
					runWithCallbackUrl('creates.generateVideo.operation.perform', { authData: auth, inputData: { prompt: 'Into the void' } }, 'https://hooks.zapier.example/1').then(
						(output) => output,
					),
				),
				timed(() => runStep('authentication.test', { authData: auth })),
			]);
			report('Find Job against a silent API', find.ms);
			report('Generate Video against a silent API', generate.ms);
			report('connection test against a silent API', test.ms);
			for (const step of [find, generate, test]) expect(step.ms).toBeLessThan(ZAPIER_STEP_LIMIT_MS);
			expect(test.ms).toBeLessThan(8_000);
			expect(zapierErrorFields(find.error).message).toMatch(/No answer came .* in time/);
			// The create may have reached the service: the user is told what works in Zapier.
			expect(zapierErrorFields(generate.error).message).toMatch(/may or may not have been created|could not be read|No answer came/);
			expect(zapierErrorFields(generate.error).message).toMatch(/Nothing is sent again for this step/);
			expect(zapierErrorFields(test.error)).toMatchObject({ code: 'timeout', message: expect.stringMatching(/could not be checked/) });
			expect(zapierErrorFields(test.error).status).toBeUndefined();
		} finally {
			await silent.close();
		}
	}, 60_000);
});
