import { MAX_DURATION_SECONDS, MIN_DURATION_SECONDS, type Resolution } from '../types';

/**
 * How long a job is expected to take, from creation to `done` (docs/api.md#render-time): "most jobs finish in
 * about 30 to 90 seconds"; bigger and longer outputs take longer. The sandbox renders on this same
 * curve, and the polling schedule takes its first look near it, so that a job usually costs one
 * lookup.
 */
const BASE_SECONDS: Record<Resolution, number> = { '720P': 30, '1080P': 40, '4K': 60 };
const SECONDS_PER_OUTPUT_SECOND: Record<Resolution, number> = { '720P': 3, '1080P': 4, '4K': 5 };

/** Expected seconds from creation to completion: 30 s (720P, 4 s) up to 90 s (4K, 10 s). */
export function expectedRenderSeconds(resolution: Resolution, durationSeconds: number): number {
	const extra = Math.max(0, durationSeconds - 4) * SECONDS_PER_OUTPUT_SECOND[resolution];
	return BASE_SECONDS[resolution] + extra;
}

/** The API's "most jobs finish in about 30 to 90 seconds", from the smallest job to the largest, for what users are told to expect. */
export const TYPICAL_RENDER_SECONDS = {
	min: expectedRenderSeconds('720P', MIN_DURATION_SECONDS),
	max: expectedRenderSeconds('4K', MAX_DURATION_SECONDS),
} as const;

/** The longest a job takes, by the API's "30 to 90 seconds", with a margin for latency. */
const LONGEST_RENDER_SECONDS = 95;

/**
 * How long a created job keeps its place among the plan's jobs at once when nobody reports its end.
 * A job this process watches (polling, or a callback it receives) is released when seen ended;
 * its hold only covers an end that never comes (2× expected + 1 min). A job nobody here watches
 * (Don't Wait) is held as long as a job of its size can take: the estimate is a median, and
 * releasing at the median sends creates the service refuses for concurrency. When the user gives
 * their own expected time, the longest time scales with it.
 */
export function slotHoldMs(expectedMs: number, estimateMs: number, watched: boolean): number {
	if (watched) return 2 * expectedMs + 60_000;
	const longestShare = Math.max(1.25, (LONGEST_RENDER_SECONDS * 1000) / Math.max(estimateMs, 1));
	return expectedMs * longestShare;
}
