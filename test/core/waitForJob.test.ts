import { fakeClient } from '../support/coreHarness';
import { json } from '../support/fakeApi';
import { JobFailedError, TimeoutError } from '../../core/errors';
import { nextPollDelayMs } from '../../core/pollSchedule';
import { RenderCalibration } from '../../core/renderCalibration';

describe('polling schedule', () => {
	it('spends one lookup on a 60 s job whose estimate is right', async () => {
		const { time, api, client } = fakeClient();
		api.renderMs = 60_000;
		const created = await time.run(client.generateVideo({ prompt: 'sixty seconds', duration: 9 }));
		expect(created.expectedMs).toBe(60_000);
		const start = time.clock.now();
		const job = await time.run(client.waitForJob(created.job.id, { expectedMs: created.expectedMs }));
		expect(job.status).toBe('done');
		expect(api.lookups()).toHaveLength(1);
		expect(time.elapsed(start)).toBe(60_000);
	});

	it('spends at most three lookups when a 60 s job is estimated at 45 s', async () => {
		const { time, api, client } = fakeClient();
		api.renderMs = 60_000;
		const created = await time.run(client.generateVideo({ prompt: 'slow', resolution: '720P', duration: 9 }));
		expect(created.expectedMs).toBe(45_000);
		await time.run(client.waitForJob(created.job.id, { expectedMs: created.expectedMs }));
		expect(api.lookups().length).toBeLessThanOrEqual(3);
	});

	it('first looks at the expected completion counted from the job creation', async () => {
		const { time, api, client } = fakeClient();
		api.renderMs = 60_000;
		const created = await time.run(client.generateVideo({ prompt: 'created earlier', duration: 9 }));
		const createdAt = time.clock.now();
		await time.advance(20_000);
		await time.run(client.waitForJob(created.job.id, { expectedMs: 60_000, createdAtMs: createdAt }));
		expect(api.lookups()).toHaveLength(1);
		expect(api.lookups()[0].at - createdAt).toBe(60_000);
	});

	it('obeys Retry-After on a lookup', async () => {
		const { time, api, client } = fakeClient();
		api.renderMs = 60_000;
		const created = await time.run(client.generateVideo({ prompt: 'p', duration: 9 }));
		api.script.push({ response: json(429, { error: { code: 'rate_limited', message: 'wait' } }, { 'retry-after': '30' }) });
		await time.run(client.waitForJob(created.job.id, { expectedMs: 60_000 }));
		const [limited, retried] = api.lookups();
		expect(retried.at - limited.at).toBeGreaterThanOrEqual(30_000);
		expect(api.lookups()).toHaveLength(2);
	});

	it('gives up at the deadline with the job id, having spent few requests', async () => {
		const { time, api, client } = fakeClient();
		api.renderMs = 3_600_000;
		const created = await time.run(client.generateVideo({ prompt: 'never ends' }));
		const start = time.clock.now();
		const error = await time.run(client.waitForJob(created.job.id, { timeoutMs: 300_000, expectedMs: created.expectedMs })).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(TimeoutError);
		expect(error).toMatchObject({ jobId: created.job.id, code: 'wait_timeout' });
		expect((error as Error).message).toContain(created.job.id);
		expect(time.elapsed(start)).toBe(300_000);
		expect(api.lookups().length).toBeLessThanOrEqual(10);
	});

	it('stops at once when cancelled, without another request', async () => {
		const { time, api, client } = fakeClient();
		api.renderMs = 600_000;
		const created = await time.run(client.generateVideo({ prompt: 'cancel me' }));
		const controller = new AbortController();
		const outcome = client.waitForJob(created.job.id, { signal: controller.signal }).catch((e: unknown) => e);
		await time.advance(10_000);
		controller.abort();
		const error = await outcome;
		expect(error).toBeInstanceOf(TimeoutError);
		expect(error).toMatchObject({ code: 'cancelled', jobId: created.job.id });
		expect(api.lookups()).toHaveLength(0);
	});

	it('turns a failed job into JobFailedError with the reason and the job id', async () => {
		const { time, api, client } = fakeClient();
		api.renderMs = 56_000;
		const created = await time.run(client.generateVideo({ prompt: 'a [fail] prompt' }));
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
		// Reported progress shortens the step to the remaining time it implies.
		expect(nextPollDelayMs({ ...base, attempt: 1, progress: 90, random: () => 0.5 })).toBe(6_667);
	});
});

describe('render times learned per key', () => {
	it('after a few jobs that take 1.5× the estimate, first looks when they really end', async () => {
		const { time, api, client } = fakeClient();
		api.renderMs = 84_000; // 1.5 × the 56 s estimate of 1080P 8 s
		for (let i = 0; i < 3; i++) {
			const created = await time.run(client.generateVideo({ prompt: `learn ${i}` }));
			await time.run(client.waitForJob(created.job.id, { expectedMs: created.expectedMs }));
		}
		const lookupsBefore = api.lookups().length;
		const created = await time.run(client.generateVideo({ prompt: 'now calibrated' }));
		await time.run(client.waitForJob(created.job.id, { expectedMs: created.expectedMs }));
		expect(lookupsBefore).toBeGreaterThan(3);
		expect(api.lookups().length - lookupsBefore).toBe(1);
	});

	it('looks again right when reported progress says the job is about to end', () => {
		expect(nextPollDelayMs({ attempt: 1, expectedMs: 60_000, elapsedMs: 60_000, progress: 98, random: () => 0.5 })).toBeLessThan(5_000);
	});
});

describe('expected render time given by the user', () => {
	it('replaces the estimate for the first look', async () => {
		const { time, api, client } = fakeClient();
		api.renderMs = 5_000;
		const created = await time.run(client.generateVideo({ prompt: 'fast account', duration: 9 }, { expectedMs: 5_000 }));
		expect(created.expectedMs).toBe(5_000);
		const start = time.clock.now();
		await time.run(client.waitForJob(created.job.id, { expectedMs: created.expectedMs }));
		expect(api.lookups()).toHaveLength(1);
		expect(time.elapsed(start)).toBe(5_000);
	});

	it('falls back to the estimate when it is zero', async () => {
		const { time, client } = fakeClient();
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
