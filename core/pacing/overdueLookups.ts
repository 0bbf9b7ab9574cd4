import type { HeldPlace, HeldPlaces } from './heldPlaces';

/** The least time between two lookups of one overdue job that nobody here watches. */
const OVERDUE_LOOK_MIN_MS = 10_000;

/** The running job nobody here watches that is furthest past its expected end, if any. */
function mostOverdue(places: HeldPlaces, now: number): HeldPlace | undefined {
	let found: HeldPlace | undefined;
	for (const place of places) {
		if (place.watched || place.jobId === undefined || place.expectedDoneAtMs > now) continue;
		if (!found || place.expectedDoneAtMs < found.expectedDoneAtMs) found = place;
	}
	return found;
}

/**
 * A caller kept waiting for a place looks up, once, the job nobody here watches that is furthest
 * past its expected end (a Don't Wait job of an earlier run), rather than waiting out the job's
 * whole hold: the lookup reports an ended job back (core's getJob). Resolves true when it looked
 * (the caller checks its place again), false when no job is overdue.
 */
export async function lookUpOverdue(places: HeldPlaces, now: number, lookUp: (jobId: string) => Promise<unknown>): Promise<boolean> {
	const overdue = mostOverdue(places, now);
	if (overdue?.jobId === undefined) return false;
	// The next hope for this job: a quarter of its expected time later, at least 10 s.
	overdue.expectedDoneAtMs = now + Math.max(OVERDUE_LOOK_MIN_MS, overdue.expectedMs / 4);
	// A failed lookup (rate window spent, network) only means waiting as before.
	await lookUp(overdue.jobId).catch(() => undefined);
	return true;
}
