import { PLANS } from '../../core/types';
import { RateLimiter } from '../../core/limiter';
import { FakeTime } from '../support/fakeTime';
import { fakeClient, maxInAnyWindow } from '../support/coreHarness';

describe('plan-aware limiter', () => {
	it('paces a burst of 50 creates on Pro inside both windows and 5 jobs at a time, with no 429', async () => {
		const { time, api, client } = fakeClient(PLANS.pro);
		api.renderMs = 56_000; // the estimate for 1080P, 8 s: one confirming lookup per job
		const start = time.clock.now();
		const jobs = await time.run(
			Promise.all(
				Array.from({ length: 50 }, async (_, i) => {
					const created = await client.generateVideo({ prompt: `clip ${i}` });
					return client.waitForJob(created.job.id, { expectedMs: created.expectedMs });
				}),
			),
		);
		expect(jobs.every((job) => job.status === 'done')).toBe(true);
		expect(api.rejected429).toHaveLength(0);
		expect(api.maxConcurrentSeen).toBe(5);
		expect(api.creates()).toHaveLength(50);
		expect(api.lookups()).toHaveLength(50);
		const times = api.apiRequests().map((r) => r.at);
		expect(maxInAnyWindow(times, 60_000)).toBeLessThanOrEqual(30);
		expect(maxInAnyWindow(times, 3_600_000)).toBeLessThanOrEqual(200);
		// Ten waves of five jobs of 56 s each: the batch takes about ten job lengths, not more.
		expect(time.elapsed(start)).toBeLessThan(12 * 56_000);
	});

	it('keeps a burst of creates without waiting inside the concurrency limit by expected completion', async () => {
		const { time, api, client } = fakeClient(PLANS.pro);
		api.renderMs = 56_000;
		await time.run(Promise.all(Array.from({ length: 12 }, (_, i) => client.generateVideo({ prompt: `p${i}` }))));
		expect(api.rejected429).toHaveLength(0);
		expect(api.maxConcurrentSeen).toBeLessThanOrEqual(5);
		expect(api.creates()).toHaveLength(12);
	});

	it('holds the 201st request of an hour until the hour window has room', async () => {
		const { time, api, client } = fakeClient(PLANS.pro);
		const created = await time.run(client.generateVideo({ prompt: 'one job' }));
		const start = time.clock.now();
		await time.run(Promise.all(Array.from({ length: 220 }, () => client.getJob(created.job.id))));
		expect(api.rejected429).toHaveLength(0);
		const times = api.apiRequests().map((r) => r.at);
		expect(maxInAnyWindow(times, 3_600_000)).toBeLessThanOrEqual(200);
		expect(maxInAnyWindow(times, 60_000)).toBeLessThanOrEqual(30);
		expect(time.elapsed(start)).toBeGreaterThanOrEqual(3_600_000 - 60_000);
	});

	it('waits for the Retry-After of a 429 before any further request on the key', async () => {
		const { time, api, client } = fakeClient(PLANS.premium);
		api.script.push({
			response: {
				status: 429,
				headers: { 'retry-after': '42', 'content-type': 'application/json' },
				body: { error: { code: 'rate_limited', message: 'slow down', requestId: 'req_1' } },
			},
		});
		const start = time.clock.now();
		await time.run(client.generateVideo({ prompt: 'after a 429' }));
		const [first, second] = api.creates();
		expect(second.at - first.at).toBeGreaterThanOrEqual(42_000);
		expect(second.headers['Idempotency-Key']).toBe(first.headers['Idempotency-Key']);
		expect(time.elapsed(start)).toBeGreaterThanOrEqual(42_000);
	});

	it('counts requests others made on the key when the service reports fewer remaining', async () => {
		const time = new FakeTime();
		const limiter = new RateLimiter(PLANS.pro, time.clock, time.sleep);
		await time.run(limiter.acquireRequest());
		limiter.observeHeaders({ 'x-ratelimit-limit': '30', 'x-ratelimit-remaining': '0' });
		expect(limiter.snapshot().lastMinute).toBe(30);
		const start = time.clock.now();
		await time.run(limiter.acquireRequest());
		expect(time.elapsed(start)).toBeGreaterThanOrEqual(60_000);
	});

	it('reads an hour-window header as the hour window', () => {
		const time = new FakeTime();
		const limiter = new RateLimiter(PLANS.pro, time.clock, time.sleep);
		limiter.observeHeaders({ 'x-ratelimit-limit': '200', 'x-ratelimit-remaining': '150' });
		expect(limiter.snapshot()).toMatchObject({ lastHour: 50, lastMinute: 0 });
	});

	it('ignores responses without rate-limit headers', () => {
		const time = new FakeTime();
		const limiter = new RateLimiter(PLANS.pro, time.clock, time.sleep);
		limiter.observeHeaders({ 'content-type': 'application/json' });
		expect(limiter.snapshot()).toEqual({ lastMinute: 0, lastHour: 0, activeJobs: 0 });
	});

	it('gives a job slot back when the create fails', async () => {
		const { time, api, client } = fakeClient(PLANS.pro);
		api.script.push({
			response: { status: 402, headers: {}, body: { error: { code: 'insufficient_credits', message: 'no credits' } } },
		});
		await expect(time.run(client.generateVideo({ prompt: 'x' }))).rejects.toMatchObject({ kind: 'credits' });
		expect(client.runtime.limiter.snapshot().activeJobs).toBe(0);
	});

	it('stops waiting for a slot when the signal aborts', async () => {
		const { time, api, client } = fakeClient({ requestsPerMinute: 30, requestsPerHour: 200, concurrentJobs: 1 });
		api.renderMs = 600_000;
		await time.run(client.generateVideo({ prompt: 'holds the only slot' }));
		const controller = new AbortController();
		const outcome = client
			.generateVideo({ prompt: 'waits' }, { signal: controller.signal })
			.catch((error: unknown) => error);
		await time.advance(5_000);
		controller.abort();
		await expect(outcome).resolves.toMatchObject({ kind: 'timeout', code: 'cancelled' });
		expect(api.creates()).toHaveLength(1);
	});
});
