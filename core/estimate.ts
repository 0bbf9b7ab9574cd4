import type { Resolution } from './types';

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
