import { callbackLateMs, slotHoldMs, type OmniVideoClient } from '../../../../core';
import { runningRows, waitsForPlace, type BatchRow, type ParkedBatch } from './callbackBatch';

/** The limiter of the batch's key, as far as the look schedule reads it. */
type Limiter = Pick<OmniVideoClient['runtime']['limiter'], 'currentLimits' | 'hourRoomBy'>;

/** A job is overdue once half its render time past its expected end (then looked up as often). */
function lateMs(row: BatchRow): number {
	return callbackLateMs(row.renderMs ?? 0);
}

/** When a running row's job is past its expected end by half its render time (a job without an expected end: at once). */
export function overdueAt(row: BatchRow): number {
	return (row.endAt ?? 0) + lateMs(row);
}

/**
 * Whether a running job's callback is no longer expected soon: a whole render time past its
 * expected end, where its callback's first try would have come. A later try comes minutes later on
 * the documented service, and never on one that delivers once.
 */
export function callbackLate(row: BatchRow, nowMs: number): boolean {
	return nowMs >= overdueAt(row) + lateMs(row);
}

/**
 * When the batch's requests were sent, as its rows record them: each create, and each row's last
 * lookup. Every process that steps the batch reads the same rows, so these include the requests
 * other processes sent for it, which this process's limiter never saw (in queue mode each worker
 * has its own). Only a row's last lookup is kept, so it errs on the side of room.
 */
export function batchRequestTimes(batch: ParkedBatch): number[] {
	const times: number[] = [];
	for (const row of batch.rows) {
		const createdAt = row.doubt ?? (row.endAt === undefined ? undefined : row.endAt - (row.renderMs ?? 0));
		if (createdAt !== undefined) times.push(createdAt);
		if (row.lookedAt !== undefined) times.push(row.lookedAt);
	}
	return times;
}

/**
 * Whether the plan's hour window holds back the rows still to make more than its places do: by
 * the time the places would let every row be made (at the running jobs' mean render time), the hour
 * takes no more requests than there are rows, by this process's limiter (which has learned the
 * batch's own requests: stepBatch).
 * Then every lookup puts a create off.
 */
export function requestsScarce(batch: ParkedBatch, limiter: Limiter, nowMs: number): boolean {
	const waiting = batch.rows.filter(waitsForPlace).length;
	if (waiting === 0) return false;
	const running = runningRows(batch);
	const renderMs = running.reduce((sum, row) => sum + (row.renderMs ?? 0), 0) / Math.max(1, running.length);
	const placesNeedMs = (waiting / Math.max(1, limiter.currentLimits.concurrentJobs)) * renderMs;
	// Room for exactly the rows left: one lookup already puts the last of them off.
	return limiter.hourRoomBy(nowMs + placesNeedMs) <= waiting;
}

/**
 * When a running row's job is looked up without a callback: once overdue, then every lateMs; not
 * while requests are scarce (see requestsScarce). Then every lookup puts a create off, and a create
 * put past the hour's end puts the batch's end off by a render, while a lookup put off until every
 * row is made costs nothing: the batch cannot end before its last row's job anyway. Measured in
 * queue mode, 500 items on Premium: 27 lookups in the first hour (each 5.5 minutes after its job's
 * end, past the documented service's second callback try) pushed 27 creates past minute 60 and the
 * batch to 1.17x the plan's limit. Meanwhile the job's callback may still come (docs/api.md: 5 s and
 * 5 min after the first try), and its place frees as its hold runs out (see holdsPlaceElsewhere).
 * On a service that sends a callback once, this moves the lookups to the end, not their number.
 */
export function lookAt(row: BatchRow, scarce: boolean): number {
	if (scarce) return Infinity;
	return Math.max(overdueAt(row), (row.lookedAt ?? -Infinity) + lateMs(row));
}

/** When a job's place frees itself if nobody reports its end: the hold a process's limiter gives its own jobs made for a callback (core's slotHoldMs). */
export function placeFreeAt(row: BatchRow): number {
	const renderMs = row.renderMs ?? 0;
	return (row.endAt ?? 0) - renderMs + slotHoldMs(renderMs, renderMs, false);
}

/**
 * Whether another process's running job still counts against this process's places: until its
 * hold runs out, as the process that made it counts it (see placeFreeAt), unless a lookup saw it
 * still running (then until seen ended). Not until it is seen ended in every case: a job whose
 * callback n8n refused (409 while a step ran) is seen ended only by a lookup, and lookups wait for
 * the hour's room like creates. Measured in queue mode, 500 items on Premium, the strictest reading
 * (each callback sent once): with 132 callbacks refused, such jobs held every place from minute 67.5
 * to 79.9 while the hour had room for 160 requests, long after their renders had ended.
 */
export function holdsPlaceElsewhere(row: BatchRow, nowMs: number): boolean {
	return row.lookedAt !== undefined || nowMs < placeFreeAt(row);
}
