import { PLANS } from '../../core/types';
import { RateLimiter } from '../../core/pacing/limiter';
import { VirtualTime } from '../support/virtualTime';
import type { BatchRow, ParkedBatch } from '../../nodes/OmniVideo/actions/video/callbackBatch';
import { requestRoom } from '../../nodes/OmniVideo/actions/video/callbackStep';

/*
 * How many requests a Wait for Callback step sends before it parks. A batch that expects no
 * callback (quiet: every running job late) has nothing to wake it but n8n's wait tracker, which may
 * come a minute late; so it sends every due lookup the windows take within a minute, waiting for
 * them in the step, not only those they take at once.
 */
const RENDER_MS = 60_000;

function batchOf(rows: BatchRow[], now: number): ParkedBatch {
	return { runIndex: 0, limitAt: now + 3_600_000, rows, heard: [] };
}

/** A job of the batch that ended long ago: its callback is late (lost or refused). */
const late = (i: number, now: number): BatchRow => ({ job: `job_late_${i}`, endAt: now - 10 * 60_000, renderMs: RENDER_MS });

/** Premium's limiter, its minute's bulk room spent: 30 requests have just left it, 29 leave within 30 s. */
async function minuteSplit() {
	const time = new VirtualTime();
	const limiter = new RateLimiter(PLANS.premium, time.clock, time.sleep);
	// 30 requests, then 29 half a minute later: the minute's bulk room (one request is kept back) is spent.
	for (let i = 0; i < 30; i++) await time.run(limiter.acquireRequest());
	await time.advance(30_000);
	for (let i = 0; i < 29; i++) await time.run(limiter.acquireRequest());
	// A minute after the first 30: they have left the minute, the other 29 leave within 30 s.
	await time.advance(31_000);
	const clock = { now: () => time.clock.now(), realMs: (ms: number) => ms };
	return { limiter, clock, now: time.clock.now() };
}

it('a quiet batch sends every due lookup the windows take within a minute, not only those they take at once', async () => {
	const { limiter, clock, now } = await minuteSplit();
	expect(limiter.requestRoomBy(now)).toBe(30);
	const quiet = batchOf(Array.from({ length: 40 }, (_, i) => late(i, now)), now);
	// Before, 30: the other 10 due lookups waited parked, for the wait tracker.
	expect(requestRoom(quiet, limiter, clock, 'lookup')).toBe(limiter.requestRoomBy(now + 65_000));
	expect(limiter.requestRoomBy(now + 65_000)).toBeGreaterThanOrEqual(40);
});

it('a batch that expects a callback sends only what the windows take at once: the callback wakes it for the rest', async () => {
	const { limiter, clock, now } = await minuteSplit();
	const expecting = batchOf([...Array.from({ length: 40 }, (_, i) => late(i, now)), { job: 'job_fresh', endAt: now + RENDER_MS, renderMs: RENDER_MS }], now);
	expect(requestRoom(expecting, limiter, clock, 'lookup')).toBe(30);
});
