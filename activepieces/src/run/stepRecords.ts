import type { Store } from '@activepieces/pieces-framework';

/**
 * How long a step's record of its job is kept in the flow's store: as long as its idempotency key
 * is meant to last. The record, not the key, is what makes a step run again in the same run (Retry
 * on Failure, the run retried from the failed step, the whole run begun again with the same id)
 * get the job it made: a service that ignores keys would make another.
 */
export const RECORD_KEPT_MS = 24 * 60 * 60 * 1000;
/** Records are listed by the hour they were made in, so that old ones can be found and deleted. */
export const RECORD_HOUR_MS = 60 * 60 * 1000;
/** The most records one step deletes: pruning takes a bounded share of any step's time. */
export const MAX_PRUNED_PER_STEP = 50;

const HOURS_KEY = 'omni-video:records:hours';
const hourKey = (hour: number) => `omni-video:records:${hour}`;

/**
 * Lists a new record under its hour and deletes records older than RECORD_KEPT_MS (up to
 * MAX_PRUNED_PER_STEP), so that the flow's store holds a day of records, not every run's. The
 * store has no compare-and-set: two runs listing records in the same hour at the same moment may
 * lose one entry of the list, whose record then stays (a few hundred bytes); no record still
 * within its day is ever deleted.
 */
export async function listRecord(store: Store, recordKey: string, nowMs: number): Promise<void> {
	const hour = Math.floor(nowMs / RECORD_HOUR_MS);
	const hours = (await store.get<number[]>(HOURS_KEY)) ?? [];
	const listed = (await store.get<string[]>(hourKey(hour))) ?? [];
	if (!listed.includes(recordKey)) await store.put(hourKey(hour), [...listed, recordKey]);
	// An hour is past once every record in it is older than RECORD_KEPT_MS.
	const lastPastHour = Math.floor((nowMs - RECORD_KEPT_MS) / RECORD_HOUR_MS) - 1;
	let budget = MAX_PRUNED_PER_STEP;
	const kept: number[] = [];
	for (const past of [...hours].sort((a, b) => a - b)) {
		if (past > lastPastHour || budget === 0) {
			kept.push(past);
			continue;
		}
		const old = (await store.get<string[]>(hourKey(past))) ?? [];
		const now = old.slice(0, budget);
		for (const key of now) await store.delete(key);
		budget -= now.length;
		if (now.length < old.length) {
			await store.put(hourKey(past), old.slice(now.length));
			kept.push(past);
		} else {
			await store.delete(hourKey(past));
		}
	}
	if (!kept.includes(hour)) kept.push(hour);
	if (kept.length !== hours.length || kept.some((value, index) => value !== hours[index])) await store.put(HOURS_KEY, kept);
}
