import { PLANS } from '../../core/types';
import { RateLimiter } from '../../core/pacing/limiter';
import { VirtualTime } from '../support/virtualTime';
import { closeCoreSandboxes, coreSandbox, maxInAnyWindow, mostJobsAtOnce, refused429 } from '../support/coreHarness';

afterEach(closeCoreSandboxes);

describe('plan-aware limiter', () => {
	it('paces a burst of 50 creates on Pro inside both windows and 5 jobs at a time, with no 429', async () => {
		const { time, sandbox, sent, client } = await coreSandbox({ limits: PLANS.pro });
		const start = time.clock.now();
		const jobs = await time.run(
			Promise.all(
				Array.from({ length: 50 }, async (_, i) => {
					// 4K, 10 s renders in the 90 s core expects: one confirming lookup per job.
					const created = await client.generateVideo({ prompt: `clip ${i}`, resolution: '4K', duration: 10 });
					return client.waitForJob(created.job.id, { expectedMs: created.expectedMs });
				}),
			),
		);
		expect(jobs.every((job) => job.status === 'done')).toBe(true);
		expect(refused429(sandbox)).toHaveLength(0);
		expect(mostJobsAtOnce(sandbox)).toBe(5);
		expect(sent.creates()).toHaveLength(50);
		expect(sent.lookups()).toHaveLength(50);
		const times = sent.api().map((r) => r.at);
		expect(maxInAnyWindow(times, 60_000)).toBeLessThanOrEqual(30);
		expect(maxInAnyWindow(times, 3_600_000)).toBeLessThanOrEqual(200);
		// Ten waves of five jobs of 90 s each: the batch takes about ten job lengths, not more.
		expect(time.elapsed(start)).toBeLessThan(12 * 90_000);
	});

	it('keeps a burst of creates without waiting inside the concurrency limit by expected completion', async () => {
		const { time, sandbox, sent, client } = await coreSandbox({ limits: PLANS.pro });
		await time.run(Promise.all(Array.from({ length: 12 }, (_, i) => client.generateVideo({ prompt: `p${i}` }))));
		expect(refused429(sandbox)).toHaveLength(0);
		expect(mostJobsAtOnce(sandbox)).toBeLessThanOrEqual(5);
		expect(sent.creates()).toHaveLength(12);
		// Creates waiting behind jobs past their expected end look again each second at most (they
		// once napped a millisecond at a time: 78,000 wake-ups for this burst).
		expect(time.naps).toBeLessThan(500);
	});

	it('holds the 201st request of an hour until the hour window has room', async () => {
		const { time, sandbox, sent, client } = await coreSandbox({ limits: PLANS.pro });
		const created = await time.run(client.generateVideo({ prompt: 'one job' }));
		const start = time.clock.now();
		await time.run(Promise.all(Array.from({ length: 220 }, () => client.getJob(created.job.id))));
		expect(refused429(sandbox)).toHaveLength(0);
		const times = sent.api().map((r) => r.at);
		expect(maxInAnyWindow(times, 3_600_000)).toBeLessThanOrEqual(200);
		expect(maxInAnyWindow(times, 60_000)).toBeLessThanOrEqual(30);
		expect(time.elapsed(start)).toBeGreaterThanOrEqual(3_600_000 - 60_000);
	});

	it('waits for the Retry-After of a 429 before any further request on the key', async () => {
		// Tests core against docs/api.md's decision (Retry-After), which --service spec takes away.
		const { time, sent, others, client } = await coreSandbox({ limits: PLANS.premium, sandbox: { service: 'default' } });
		// Another process on the key filled its minute window 18 s ago: the service says wait 42 s.
		await others.lookups(60);
		await time.advance(18_000);
		const start = time.clock.now();
		await time.run(client.generateVideo({ prompt: 'after a 429' }));
		const [first, second] = sent.creates();
		expect(first.response).toMatchObject({ status: 429, headers: { 'retry-after': '42' } });
		expect(second.at - first.at).toBeGreaterThanOrEqual(42_000);
		expect(second.headers['Idempotency-Key']).toBe(first.headers['Idempotency-Key']);
		expect(time.elapsed(start)).toBeGreaterThanOrEqual(42_000);
	});

	it('counts requests others made on the key when the service reports fewer remaining', async () => {
		const time = new VirtualTime();
		const limiter = new RateLimiter(PLANS.pro, time.clock, time.sleep);
		await time.run(limiter.acquireRequest());
		limiter.observeHeaders({ 'x-ratelimit-limit': '30', 'x-ratelimit-remaining': '0' });
		expect(limiter.snapshot().lastMinute).toBe(30);
		const start = time.clock.now();
		await time.run(limiter.acquireRequest());
		expect(time.elapsed(start)).toBeGreaterThanOrEqual(60_000);
	});

	it('reads an hour-window header as the hour window', () => {
		const time = new VirtualTime();
		const limiter = new RateLimiter(PLANS.pro, time.clock, time.sleep);
		limiter.observeHeaders({ 'x-ratelimit-limit': '200', 'x-ratelimit-remaining': '150' });
		expect(limiter.snapshot()).toMatchObject({ lastHour: 50, lastMinute: 0 });
	});

	it('ignores responses without rate-limit headers', () => {
		const time = new VirtualTime();
		const limiter = new RateLimiter(PLANS.pro, time.clock, time.sleep);
		limiter.observeHeaders({ 'content-type': 'application/json' });
		expect(limiter.snapshot()).toEqual({ lastMinute: 0, lastHour: 0, activeJobs: 0 });
	});

	it('gives a job slot back when the create fails', async () => {
		const { time, client } = await coreSandbox({ limits: PLANS.pro, key: 'broke' });
		await expect(time.run(client.generateVideo({ prompt: 'x' }))).rejects.toMatchObject({ kind: 'credits' });
		expect(client.runtime.limiter.snapshot().activeJobs).toBe(0);
	});

	it('stops waiting for a slot when the signal aborts', async () => {
		const { time, sent, client } = await coreSandbox({ limits: { requestsPerMinute: 30, requestsPerHour: 200, concurrentJobs: 1 } });
		await time.run(client.generateVideo({ prompt: 'holds the only slot' }));
		const controller = new AbortController();
		const outcome = client
			.generateVideo({ prompt: 'waits' }, { signal: controller.signal })
			.catch((error: unknown) => error);
		await time.advance(5_000);
		controller.abort();
		await expect(outcome).resolves.toMatchObject({ kind: 'timeout', code: 'cancelled' });
		expect(sent.creates()).toHaveLength(1);
	});
});

describe('requests another process sent on the key, known from a shared record', () => {
	const MINUTE = 60_000;

	it('count in both windows at the times the record gives, once however often they are learned, and the hour has room again as they leave it', async () => {
		const time = new VirtualTime();
		const limiter = new RateLimiter(PLANS.pro, time.clock, time.sleep);
		const now = time.clock.now();
		// Our own 20 requests, now; the record: those 20 and 180 more, one every 15 s over the last 45 minutes.
		for (let i = 0; i < 20; i++) await time.run(limiter.acquireRequest());
		const others = Array.from({ length: 180 }, (_, i) => now - 45 * MINUTE + i * 15_000);
		const record = [...others, ...Array.from({ length: 20 }, () => now)];
		expect(limiter.requestRoomBy(now + 2_000)).toBeGreaterThan(0);
		limiter.learnSent(record);
		limiter.learnSent(record);
		// 200 in the hour (Pro's limit): nothing more until the oldest leave it, 15 minutes on.
		expect(limiter.snapshot().lastHour).toBe(200);
		expect(limiter.requestRoomBy(now + 2_000)).toBe(0);
		expect(limiter.nextRequestAt()).toBeGreaterThanOrEqual(now + 15 * MINUTE);
		expect(limiter.nextRequestAt()).toBeLessThan(now + 16 * MINUTE);
		// The minute holds our 20 and the record's latest 4 besides: 24 of 30.
		expect(limiter.snapshot().lastMinute).toBe(24);
	});

	it('counts another process’s requests the headers told of at the record’s times once the record shows them, not as sent when told', async () => {
		const time = new VirtualTime();
		const limiter = new RateLimiter(PLANS.pro, time.clock, time.sleep);
		const now = time.clock.now();
		// Another process sent 190 requests over the last 50 minutes; we send 10 now, and the headers say the hour is full.
		const theirs = Array.from({ length: 190 }, (_, i) => now - 50 * MINUTE + i * 15_000);
		const ours: number[] = [];
		for (let i = 0; i < 10; i++) {
			ours.push(time.clock.now());
			await time.run(limiter.acquireRequest());
		}
		limiter.observeHeaders({ 'x-ratelimit-limit': '200', 'x-ratelimit-remaining': '0' });
		expect(limiter.snapshot().lastHour).toBe(200);
		// Told of now, they hold the hour full for an hour; a record that does not show them (another workflow's) changes nothing.
		limiter.learnSent(ours);
		expect(limiter.nextRequestAt()).toBeGreaterThanOrEqual(now + 60 * MINUTE);
		// The shared record shows them: the hour has room as the first of them leave it, 10 minutes on.
		limiter.learnSent([...theirs, ...ours]);
		limiter.learnSent([...theirs, ...ours]);
		expect(limiter.snapshot().lastHour).toBe(200);
		expect(limiter.nextRequestAt()).toBeGreaterThanOrEqual(now + 10 * MINUTE);
		expect(limiter.nextRequestAt()).toBeLessThan(now + 11 * MINUTE);
	});
});
