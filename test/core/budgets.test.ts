import { PLANS } from '../../core/types';
import { RateLimitError, TransportError } from '../../core/errors/errors';
import type { OmniVideoClient } from '../../core/client';
import { closeCoreSandboxes, coreSandbox, refused429 } from '../support/coreHarness';
import type { VirtualTime } from '../support/virtualTime';

/** Fills the key's minute window with bulk requests that are still queued behind it. */
async function saturate(client: OmniVideoClient, time: VirtualTime, jobId: string, count: number) {
	const bulk = Array.from({ length: count }, () => client.getJob(jobId).catch((error: unknown) => error));
	await time.advance(100);
	return bulk;
}

afterEach(closeCoreSandboxes);

describe('host budgets: deadlines and priorities', () => {
	it('fails at once, before sending, when the plan would make a request wait past its deadline', async () => {
		const { time, sent, client } = await coreSandbox({ limits: PLANS.pro });
		const created = await time.run(client.generateVideo({ prompt: 'one' }));
		const bulk = await saturate(client, time, created.job.id, 40);
		const sentBefore = sent.api().length;
		const start = time.clock.now();
		const error = await client
			.getJob(created.job.id, { deadlineAtMs: time.clock.now() + 25_000 })
			.catch((e: unknown) => e);
		expect(error).toBeInstanceOf(RateLimitError);
		expect(error).toMatchObject({ code: 'rate_limited_locally' });
		expect((error as RateLimitError).retryAfterMs).toBeGreaterThan(25_000);
		expect((error as Error).message).toMatch(/try again in \d+ s/i);
		expect(time.elapsed(start)).toBe(0);
		expect(sent.api().length).toBe(sentBefore);
		await time.run(Promise.all(bulk));
	});

	it('lets an urgent lookup (confirming a callback) pass 40 queued bulk lookups at once', async () => {
		const { time, sandbox, client } = await coreSandbox({ limits: PLANS.pro });
		const created = await time.run(client.generateVideo({ prompt: 'one' }));
		const bulk = await saturate(client, time, created.job.id, 40);
		const start = time.clock.now();
		const urgent = await time.run(
			client.getJob(created.job.id, { priority: 'urgent', deadlineAtMs: time.clock.now() + 2_000 }),
		);
		expect(urgent.id).toBe(created.job.id);
		expect(time.elapsed(start)).toBeLessThanOrEqual(2_000);
		await time.run(Promise.all(bulk));
		expect(refused429(sandbox)).toHaveLength(0);
	});

	it('keeps a reserve of each window that bulk work never uses: one request when no urgent work came lately', async () => {
		const { time, sent, client } = await coreSandbox({ limits: PLANS.pro });
		const created = await time.run(client.generateVideo({ prompt: 'one' }));
		await saturate(client, time, created.job.id, 60);
		// Bulk has taken what it may of the first minute; 1 of Pro's 30 remains for urgent work.
		const inFirstMinute = sent.api().filter((r) => r.at < sent.api()[0].at + 60_000);
		expect(inFirstMinute.length).toBe(29);
		const urgent = await time.run(client.getJob(created.job.id, { priority: 'urgent', deadlineAtMs: time.clock.now() + 1_000 }));
		expect(urgent.id).toBe(created.job.id);
	});

	it('keeps a larger reserve as urgent work comes, up to a tenth of each window', async () => {
		const { time, sent, client } = await coreSandbox({ limits: PLANS.pro });
		const created = await time.run(client.generateVideo({ prompt: 'one' }));
		const urgentNow = () => time.run(client.getJob(created.job.id, { priority: 'urgent', deadlineAtMs: time.clock.now() + 1_000 }));
		for (let i = 0; i < 5; i++) await urgentNow();
		await saturate(client, time, created.job.id, 60);
		// Five urgent requests in the window: bulk leaves 3 of Pro's 30 (a tenth) for more.
		const inFirstMinute = sent.api().filter((r) => r.at < sent.api()[0].at + 60_000);
		expect(inFirstMinute.length).toBe(27);
		expect(await Promise.all([1, 2, 3].map(() => urgentNow()))).toHaveLength(3);
	});

	it('tells a caller that must not wait how many requests the windows take by a moment, and when the next one could go', async () => {
		const { time, client } = await coreSandbox({ limits: { requestsPerMinute: 3, requestsPerHour: 200, concurrentJobs: 5 } });
		const { limiter } = client.runtime;
		const soon = () => time.clock.now() + 2_000;
		// Three a minute, one kept back for urgent work: bulk may send two now.
		expect(limiter.requestRoomBy(soon())).toBe(2);
		const created = await time.run(client.generateVideo({ prompt: 'one' }));
		const firstAt = time.clock.now();
		expect(limiter.requestRoomBy(soon())).toBe(1);
		await time.run(client.getJob(created.job.id));
		expect(limiter.requestRoomBy(soon())).toBe(0);
		// The next bulk request goes when the first leaves the minute (with the window's margin).
		expect(limiter.nextRequestAt()).toBeGreaterThanOrEqual(firstAt + 60_000);
		expect(limiter.nextRequestAt()).toBeLessThanOrEqual(firstAt + 62_000);
		// Both were sent at one moment: both leave the minute then.
		expect(limiter.requestRoomBy(limiter.nextRequestAt())).toBe(2);
	});

	it('gives up waiting for a job slot at once when none can be free before the deadline', async () => {
		const { time, sent, client } = await coreSandbox({ limits: { requestsPerMinute: 30, requestsPerHour: 200, concurrentJobs: 1 } });
		await time.run(client.generateVideo({ prompt: 'holds the only slot' }));
		const error = await client
			.generateVideo({ prompt: 'waits' }, { deadlineAtMs: time.clock.now() + 20_000 })
			.catch((e: unknown) => e);
		expect(error).toBeInstanceOf(RateLimitError);
		expect((error as RateLimitError).retryAfterMs).toBeGreaterThan(20_000);
		expect(sent.creates()).toHaveLength(1);
	});

	it('ends a 429 whose Retry-After is past the deadline with that delay, without waiting', async () => {
		// Tests core against docs/api.md's decision (Retry-After and 429 concurrency_limited), which --service spec takes away.
		const { time, sent, others, client } = await coreSandbox({ limits: PLANS.pro, sandbox: { service: 'default' } });
		// Another process on the key filled its minute window 20 s ago: the service says wait 40 s.
		await others.lookups(30);
		await time.advance(20_000);
		const start = time.clock.now();
		const error = await time
			.run(client.getJob('job_x', { deadlineAtMs: time.clock.now() + 25_000 }))
			.catch((e: unknown) => e);
		expect(error).toBeInstanceOf(RateLimitError);
		expect((error as RateLimitError).retryAfterMs).toBe(40_000);
		expect(time.elapsed(start)).toBeLessThan(1_000);
		expect(sent.lookups()).toMatchObject([{ response: { status: 429, headers: { 'retry-after': '40' } } }]);
	});

	it('holds back only new jobs after a concurrency 429; lookups go on', async () => {
		// Tests core against docs/api.md's decision (Retry-After and 429 concurrency_limited), which --service spec takes away.
		const { time, sent, others, client } = await coreSandbox({ limits: PLANS.pro, sandbox: { service: 'default' } });
		const created = await time.run(client.generateVideo({ prompt: 'one' }));
		// Someone else's jobs take the account's other four slots.
		await others.creates(4);
		const second = client.generateVideo({ prompt: 'two' });
		await time.advance(1_000);
		const start = time.clock.now();
		await time.run(client.getJob(created.job.id));
		expect(time.elapsed(start)).toBeLessThan(5_000);
		await time.run(second);
		expect(sent.creates()).toHaveLength(3);
		expect(sent.creates()[1].response).toMatchObject({ status: 429, body: { error: { code: 'concurrency_limited' } } });
	});

	it('with a retry budget of its own, a create refused for concurrency ends as a RateLimitError, queueing for no place', async () => {
		// A Wait for Callback step: the row waits for a later step instead of the step blocking.
		const { time, sent, others, client } = await coreSandbox({ limits: PLANS.pro });
		await others.creates(5);
		const start = time.clock.now();
		const error = await time.run(client.generateVideo({ prompt: 'two' }, { retryBudgetMs: 2_000 })).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(RateLimitError);
		expect(time.elapsed(start)).toBeLessThan(2_000);
		expect(sent.creates()).toHaveLength(1);
		expect(sent.creates()[0].response).toMatchObject({ status: 429 });
	});

	it('with a retry budget of its own, a lookup refused 429 past it ends at once', async () => {
		const { time, sent, others, client } = await coreSandbox({ limits: PLANS.pro });
		await others.lookups(30);
		const start = time.clock.now();
		const error = await time.run(client.getJob('job_x', { retryBudgetMs: 2_000 })).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(RateLimitError);
		expect(time.elapsed(start)).toBeLessThan(2_000);
		expect(sent.lookups()).toHaveLength(1);
	});

	it('shrinks the request timeout to what remains of the deadline', async () => {
		const timeouts: Array<number | undefined> = [];
		const { time, client } = await coreSandbox({
			limits: PLANS.pro,
			wrapTransport: (transport) => ({
				...transport,
				api: (request) => {
					timeouts.push(request.timeoutMs);
					return transport.api(request);
				},
			}),
		});
		await time.run(client.getJob('job_x', { deadlineAtMs: time.clock.now() + 4_000 }).catch(() => undefined));
		expect(timeouts[0]).toBeLessThanOrEqual(4_000);
	});

	it('names the idempotency key when a create is cancelled after it was sent', async () => {
		const controller = new AbortController();
		const { time, sandbox, sent, client } = await coreSandbox({
			limits: PLANS.pro,
			wrapTransport: (transport) => ({
				...transport,
				// The service created the job; the host cancelled before its answer was read.
				api: async (request) => {
					await transport.api(request);
					controller.abort();
					throw new Error('aborted by the host');
				},
			}),
		});
		const error = await time
			.run(client.generateVideo({ prompt: 'cancelled mid-flight' }, { idempotencyKey: 'idem_cancel_1', signal: controller.signal }))
			.catch((e: unknown) => e);
		expect(sent.creates()).toHaveLength(1);
		expect(sandbox.jobs.all.size).toBe(1);
		expect(error).toBeInstanceOf(TransportError);
		expect(error).toMatchObject({ failure: 'aborted', idempotencyKey: 'idem_cancel_1' });
		expect((error as Error).message).toContain('idem_cancel_1');
	});

	it('answers a callback 503 with Retry-After when the key cannot confirm it in time, instead of holding it', async () => {
		const { time, sent, client } = await coreSandbox({ limits: PLANS.pro });
		const created = await time.run(client.generateVideo({ prompt: 'one' }));
		client.runtime.limiter.pause(45_000); // the service said 429, Retry-After 45 s
		const start = time.clock.now();
		const outcome = await time.run(
			client.handleCallback({ headers: {}, rawBody: JSON.stringify({ id: created.job.id, status: 'done' }) }),
		);
		expect(outcome).toMatchObject({ accepted: false, status: 503, jobId: created.job.id });
		expect(outcome.accepted === false && outcome.retryAfterSeconds).toBeGreaterThanOrEqual(44);
		expect(time.elapsed(start)).toBe(0);
		expect(sent.lookups()).toHaveLength(0);
	});
});
