import { PLANS, type PlanLimits } from '../../core/types';
import { RateLimiter } from '../../core/pacing/limiter';
import { VirtualTime } from '../support/virtualTime';
import type { BatchRow, ParkedBatch } from '../../nodes/OmniVideo/actions/video/callbackBatch';
import type { ItemJobPlan } from '../../nodes/OmniVideo/actions/video/createItemJob';
import { batchRequestTimes, holdsPlaceElsewhere, lookAt, overdueAt, placeFreeAt, requestsScarce } from '../../nodes/OmniVideo/actions/video/overdueLooks';

/*
 * When Wait for Callback looks up a job whose callback has not come (lost, refused with 409 while a
 * step ran, or never sent): half its render time past its expected end; but while the plan's hour
 * is what holds back the rows still to make, only after the documented service's next callback try,
 * since every lookup then puts a create off (500 items on Premium: 1.31 requests a job and 1.17x the
 * plan's limit in queue mode before this schedule). The limiter is core's own.
 */
const RENDER_MS = 60_000;

function batchOf(running: number, waiting: number, now: number): ParkedBatch {
	const runningRows: BatchRow[] = Array.from({ length: running }, (_, i) => ({ job: `job_${i}`, endAt: now + RENDER_MS, renderMs: RENDER_MS }));
	// A row still to make only needs a plan; its content does not matter here.
	const waitingRows: BatchRow[] = Array.from({ length: waiting }, () => ({ plan: {} as ItemJobPlan }));
	return { runIndex: 0, limitAt: now + 3_600_000, rows: [...runningRows, ...waitingRows], heard: [] };
}

/** A limiter of the plan that has sent `sent` requests just now. */
async function limiterAfter(limits: PlanLimits, sent: number) {
	const time = new VirtualTime();
	const limiter = new RateLimiter(limits, time.clock, time.sleep);
	for (let i = 0; i < sent; i++) await time.run(limiter.acquireRequest());
	return { time, limiter };
}

it("counts what the plan's hour takes by a moment: its room now plus the requests that leave it by then", async () => {
	const { time, limiter } = await limiterAfter(PLANS.premium, 10);
	// 500 an hour, one kept back for urgent work.
	expect(limiter.hourRoomBy(time.clock.now())).toBe(489);
	expect(limiter.hourRoomBy(time.clock.now() + 30 * 60_000)).toBe(489);
	expect(limiter.hourRoomBy(time.clock.now() + 62 * 60_000)).toBe(499);
});

it("puts an overdue job's lookup off until every row is made while the hour holds back the rows still to make", async () => {
	// 500 rows on Premium: 10 made, 490 to make; the places would take them in 49 minutes, the hour takes 489.
	const { time, limiter } = await limiterAfter(PLANS.premium, 10);
	const now = time.clock.now();
	const batch = batchOf(10, 490, now);
	expect(requestsScarce(batch, limiter, now)).toBe(true);
	const row = batch.rows[0];
	expect(overdueAt(row)).toBe(now + RENDER_MS * 1.5);
	expect(lookAt(row, true)).toBe(Infinity);
	// Once every row is made, nothing is scarce: overdue jobs are looked up at once.
	expect(requestsScarce(batchOf(10, 0, now), limiter, now)).toBe(false);
	expect(lookAt(row, false)).toBe(overdueAt(row));
});

it('counts the hour as scarce when it takes exactly the rows still to make: one lookup would put the last of them off', async () => {
	const { time, limiter } = await limiterAfter(PLANS.premium, 10);
	const now = time.clock.now();
	// 489 requests left in the hour (see above), 489 rows to make.
	expect(requestsScarce(batchOf(10, 489, now), limiter, now)).toBe(true);
	expect(requestsScarce(batchOf(10, 488, now), limiter, now)).toBe(false);
});

it("counts the hour from the batch's own rows too: requests other processes sent for it, which this process's limiter never saw", async () => {
	// Queue mode: this worker sent nothing; other processes made 300 rows of the batch, 290 of them
	// ended and looked up once, 20 minutes ago and since. 200 rows are still to make on Premium.
	const { time, limiter } = await limiterAfter(PLANS.premium, 0);
	const now = time.clock.now();
	const batch = batchOf(10, 200, now);
	for (let i = 0; i < 290; i++) batch.rows.push({ job: `job_done_${i}`, endAt: now - 20 * 60_000 + RENDER_MS, renderMs: RENDER_MS, lookedAt: now - 5 * 60_000, by: 'another process' });
	expect(limiter.hourRoomBy(now)).toBe(499);
	// 300 creates and 290 lookups within the hour: past Premium's 500, no room.
	expect(batchRequestTimes(batch)).toHaveLength(590);
	// A step learns them (stepBatch), as often as it reads the batch: counted once.
	limiter.learnSent(batchRequestTimes(batch));
	limiter.learnSent(batchRequestTimes(batch));
	expect(limiter.hourRoomBy(now)).toBe(0);
	expect(requestsScarce(batch, limiter, now)).toBe(true);
	// 59 minutes on, the other processes' creates and lookups have left the window; the 10 creates of just now have not.
	expect(limiter.hourRoomBy(now + 59 * 60_000)).toBe(489);
});

it('looks an overdue job up on time when the places, not the hour, hold the rows back, and then as often as it is late', async () => {
	// 50 rows on Pro: 5 made, 45 to make in 9 minutes by the places; the hour takes 194 more.
	const { time, limiter } = await limiterAfter(PLANS.pro, 5);
	const now = time.clock.now();
	const batch = batchOf(5, 45, now);
	expect(requestsScarce(batch, limiter, now)).toBe(false);
	const row = batch.rows[0];
	expect(lookAt(row, false)).toBe(now + RENDER_MS * 1.5);
	row.lookedAt = now + RENDER_MS * 2;
	expect(lookAt(row, false)).toBe(now + RENDER_MS * 2.5);
});

it("counts another process's job against the places until its hold runs out, unless a lookup saw it running", () => {
	const now = Date.UTC(2026, 4, 1, 12);
	const row: BatchRow = { job: 'job_other', endAt: now, renderMs: RENDER_MS, by: 'another process' };
	// The hold the making process's limiter gives it: as long as a job of its size can take (95 s), past its overdue moment.
	expect(placeFreeAt(row)).toBe(now - RENDER_MS + 95_000);
	expect(placeFreeAt(row)).toBeGreaterThan(overdueAt(row));
	const later = placeFreeAt(row) + 1;
	expect(holdsPlaceElsewhere(row, placeFreeAt(row) - 1)).toBe(true);
	// Whether or not requests are scarce: a job whose callback n8n refused is seen ended only by a
	// lookup, which waits for the windows like a create.
	expect(holdsPlaceElsewhere(row, later)).toBe(false);
	row.lookedAt = later;
	expect(holdsPlaceElsewhere(row, later)).toBe(true);
});
