import { closeCoreSandboxes, coreSandbox, renderMs } from '../support/coreHarness';
import { JobFailedError, TimeoutError } from '../../core/errors/errors';
import { nextPollDelayMs } from '../../core/pacing/pollSchedule';
import { RenderCalibration } from '../../core/pacing/renderCalibration';

afterEach(closeCoreSandboxes);

describe('polling schedule', () => {
	it('spends one lookup on a 90 s job whose estimate is right', async () => {
		const { time, sandbox, sent, client } = await coreSandbox();
		const created = await time.run(client.generateVideo({ prompt: 'ninety seconds', resolution: '4K', duration: 10 }));
		expect(created.expectedMs).toBe(90_000);
		expect(renderMs(sandbox, created.job.id)).toBe(90_000);
		const start = time.clock.now();
		const job = await time.run(client.waitForJob(created.job.id, { expectedMs: created.expectedMs }));
		expect(job.status).toBe('done');
		expect(sent.lookups()).toHaveLength(1);
		expect(time.elapsed(start)).toBe(90_000);
	});

	it('spends at most three lookups when a job takes longer than its 45 s estimate', async () => {
		const { time, sandbox, sent, client } = await coreSandbox();
		const created = await time.run(client.generateVideo({ prompt: 'slow', resolution: '720P', duration: 9 }));
		expect(created.expectedMs).toBe(45_000);
		expect(renderMs(sandbox, created.job.id)).toBeGreaterThan(45_000);
		await time.run(client.waitForJob(created.job.id, { expectedMs: created.expectedMs }));
		expect(sent.lookups().length).toBeLessThanOrEqual(3);
	});

	it('first looks at the expected completion counted from the job creation', async () => {
		const { time, sent, client } = await coreSandbox();
		const created = await time.run(client.generateVideo({ prompt: 'created earlier', resolution: '4K', duration: 10 }));
		const createdAt = time.clock.now();
		await time.advance(20_000);
		await time.run(client.waitForJob(created.job.id, { expectedMs: 90_000, createdAtMs: createdAt }));
		expect(sent.lookups()).toHaveLength(1);
		expect(sent.lookups()[0].at - createdAt).toBe(90_000);
	});

	it('obeys Retry-After on a lookup', async () => {
		// Tests core against docs/api.md's decision (Retry-After), which --service spec takes away.
		const { time, sent, others, client } = await coreSandbox({ sandbox: { service: 'default' } });
		const created = await time.run(client.generateVideo({ prompt: 'p', resolution: '4K', duration: 10 }));
		const waiting = client.waitForJob(created.job.id, { expectedMs: 90_000 });
		// Another process on the key fills its minute window 30 s before the client's first look.
		await time.advance(60_000);
		await others.lookups(30);
		await time.run(waiting);
		const [limited, retried] = sent.lookups();
		expect(limited.response).toMatchObject({ status: 429, headers: { 'retry-after': '30' } });
		expect(retried.at - limited.at).toBeGreaterThanOrEqual(30_000);
		expect(sent.lookups()).toHaveLength(2);
	});

	it('gives up at the deadline with the job id, having spent few requests', async () => {
		const { time, sent, client } = await coreSandbox();
		const created = await time.run(client.generateVideo({ prompt: 'never ends [sandbox:job-fails-timeout]' }));
		const start = time.clock.now();
		const error = await time.run(client.waitForJob(created.job.id, { timeoutMs: 300_000, expectedMs: created.expectedMs })).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(TimeoutError);
		expect(error).toMatchObject({ jobId: created.job.id, code: 'wait_timeout' });
		expect((error as Error).message).toContain(created.job.id);
		expect(time.elapsed(start)).toBe(300_000);
		expect(sent.lookups().length).toBeLessThanOrEqual(10);
	});

	it('stops at once when cancelled, without another request', async () => {
		const { time, sent, client } = await coreSandbox();
		const created = await time.run(client.generateVideo({ prompt: 'cancel me' }));
		const controller = new AbortController();
		const outcome = client.waitForJob(created.job.id, { signal: controller.signal }).catch((e: unknown) => e);
		await time.advance(10_000);
		controller.abort();
		const error = await outcome;
		expect(error).toBeInstanceOf(TimeoutError);
		expect(error).toMatchObject({ code: 'cancelled', jobId: created.job.id });
		expect(sent.lookups()).toHaveLength(0);
	});

	it('turns a failed job into JobFailedError with the reason and the job id', async () => {
		const { time, client } = await coreSandbox();
		const created = await time.run(client.generateVideo({ prompt: 'a prompt [sandbox:job-fails-content-policy]' }));
		const error = await time.run(client.waitForJob(created.job.id, { expectedMs: created.expectedMs })).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(JobFailedError);
		expect(error).toMatchObject({ jobId: created.job.id, reason: 'Prompt rejected by content policy', code: 'content_policy' });
		expect((error as Error).message).toContain(created.job.id);
		expect(client.runtime.limiter.snapshot().activeJobs).toBe(0);
	});

	it('backs off with jitter after the first look and caps the step', () => {
		const base = { expectedMs: 60_000, elapsedMs: 60_000 };
		expect(nextPollDelayMs({ ...base, attempt: 0, random: () => 0.5 })).toBe(0);
		expect(nextPollDelayMs({ ...base, attempt: 1, random: () => 0.5 })).toBe(10_000);
		expect(nextPollDelayMs({ ...base, attempt: 2, random: () => 0.5 })).toBe(15_000);
		expect(nextPollDelayMs({ ...base, attempt: 1, random: () => 0 })).toBe(8_000);
		expect(nextPollDelayMs({ ...base, attempt: 1, random: () => 0.999 })).toBeCloseTo(12_000, -2);
		expect(nextPollDelayMs({ ...base, attempt: 20, random: () => 0.5 })).toBe(60_000);
		// Reported progress sets the step to the remaining time it implies, less the queued share,
		// shorter or longer than the backoff, and never before that end (0 to +10 %).
		expect(nextPollDelayMs({ ...base, attempt: 1, progress: 90, random: () => 0 })).toBe(6_000);
		expect(nextPollDelayMs({ ...base, attempt: 1, progress: 90, random: () => 0.5 })).toBe(6_300);
		expect(nextPollDelayMs({ ...base, attempt: 1, progress: 50, random: () => 0 })).toBe(54_000);
		expect(nextPollDelayMs({ ...base, attempt: 1, progress: 10, random: () => 0 })).toBe(60_000);
	});
});

describe('render times learned per key', () => {
	it('after a few jobs that take longer than the estimate, first looks when they really end', async () => {
		const { time, sandbox, sent, client } = await coreSandbox();
		for (let i = 0; i < 3; i++) {
			const created = await time.run(client.generateVideo({ prompt: `learn ${i}` }));
			expect(renderMs(sandbox, created.job.id)).toBeGreaterThan(created.expectedMs);
			await time.run(client.waitForJob(created.job.id, { expectedMs: created.expectedMs }));
		}
		const lookupsBefore = sent.lookups().length;
		const created = await time.run(client.generateVideo({ prompt: 'now calibrated' }));
		await time.run(client.waitForJob(created.job.id, { expectedMs: created.expectedMs }));
		expect(lookupsBefore).toBeGreaterThan(3);
		expect(sent.lookups().length - lookupsBefore).toBe(1);
	});

	it('once the key’s jobs are known to spread widely, first looks before their median and still sees the job end', async () => {
		const { time, sandbox, sent, client } = await coreSandbox();
		// Ten jobs of this size took from 0.55× to 1.6× the 60 s estimate.
		for (let i = 0; i < 10; i++) client.runtime.calibration.record(60_000, 60_000 * (0.55 + (1.05 * i) / 9));
		// The rule before looked first at the learned median, 68 s here.
		expect(client.runtime.calibration.calibrated(60_000)).toBe(68_000);
		const created = await time.run(client.generateVideo({ prompt: 'spread learned', duration: 9 }));
		expect(created.expectedMs).toBe(60_000);
		const createdAt = time.clock.now();
		const job = await time.run(client.waitForJob(created.job.id, { expectedMs: created.expectedMs, createdAtMs: createdAt }));
		expect(job.status).toBe('done');
		expect(sent.lookups()[0].at - createdAt).toBeLessThan(68_000 - 3_000);
		expect(sent.lookups()[sent.lookups().length - 1].at - createdAt).toBeGreaterThanOrEqual(renderMs(sandbox, created.job.id));
	});

	it('looks again right when reported progress says the job is about to end', () => {
		expect(nextPollDelayMs({ attempt: 1, expectedMs: 60_000, elapsedMs: 60_000, progress: 98, random: () => 0.5 })).toBeLessThan(5_000);
	});
});

describe('expected render time given by the user', () => {
	it('replaces the estimate for the first look', async () => {
		// The user knows their jobs of this size take 67 s (core's estimate says 60 s).
		const { time, sandbox, sent, client } = await coreSandbox();
		const created = await time.run(client.generateVideo({ prompt: 'known account', duration: 9 }, { expectedMs: 67_000 }));
		expect(created.expectedMs).toBe(67_000);
		expect(renderMs(sandbox, created.job.id)).toBe(67_000);
		const start = time.clock.now();
		await time.run(client.waitForJob(created.job.id, { expectedMs: created.expectedMs }));
		expect(sent.lookups()).toHaveLength(1);
		expect(time.elapsed(start)).toBe(67_000);
	});

	it('falls back to the estimate when it is zero', async () => {
		const { time, client } = await coreSandbox();
		const created = await time.run(client.generateVideo({ prompt: 'auto', duration: 9 }, { expectedMs: 0 }));
		expect(created.expectedMs).toBe(60_000);
	});
});

describe('render-time calibration bounds', () => {
	it('ignores jobs whose times cannot be render times (a sped-up service clock)', () => {
		const calibration = new RenderCalibration();
		for (let i = 0; i < 5; i++) calibration.record(2_000, 60_000);
		expect(calibration.calibrated(2_000)).toBe(2_000);
		for (let i = 0; i < 5; i++) calibration.record(56_000, 70_000);
		expect(calibration.calibrated(56_000)).toBe(70_000);
	});
});
