import type { Random } from './transport';

/** Never look sooner than this after a look that found the job still running. */
const MIN_REPOLL_MS = 5_000;
/** When progress says the end is near, look again this soon at the earliest. */
const MIN_NEAR_END_MS = 1_000;
/** Never wait longer than this between looks. */
const MAX_REPOLL_MS = 60_000;
const BACKOFF_FACTOR = 1.5;
/** ±20 %, so that many waiting items do not look in lockstep. */
const JITTER = 0.2;

/**
 * How long to wait before the next lookup of a running job.
 *
 * The first look is placed at the job's expected completion (so most jobs cost one lookup);
 * each later look backs off from a step of a sixth of the expected time, with jitter. When the
 * service reports progress, the remaining time it implies caps the step.
 */
export function nextPollDelayMs(input: {
	/** 0 for the first look. */
	attempt: number;
	/** Expected render time of the job, from creation to done. */
	expectedMs: number;
	/** Time since the job was created. */
	elapsedMs: number;
	/** Progress 0–100 reported by the last look, if any. */
	progress?: number;
	random: Random;
}): number {
	const { attempt, expectedMs, elapsedMs, progress, random } = input;
	if (attempt === 0) return Math.max(0, expectedMs - elapsedMs);
	let step = Math.max(MIN_REPOLL_MS, expectedMs / 6) * BACKOFF_FACTOR ** (attempt - 1);
	if (progress !== undefined && progress > 0 && progress < 100) {
		const remaining = (elapsedMs * (100 - progress)) / progress;
		// The end the progress implies is the best guess there is: look right then.
		step = Math.min(step, Math.max(MIN_NEAR_END_MS, remaining));
	}
	step = Math.min(step, MAX_REPOLL_MS);
	const jitter = 1 + JITTER * (2 * random() - 1);
	return Math.round(step * jitter);
}
