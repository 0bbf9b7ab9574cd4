import type { Random } from '../http/transport';

/** Never look sooner than this after a look that found the job still running. */
const MIN_REPOLL_MS = 5_000;
/** When progress says the end is near, look again this soon at the earliest. */
const MIN_NEAR_END_MS = 1_000;
/** Never wait longer than this between looks. */
const MAX_REPOLL_MS = 60_000;
const BACKOFF_FACTOR = 1.5;
/** Up to 10 % after the end the progress implies: spreads the looks of many items, never early. */
const NEAR_END_MARGIN = 0.1;
/**
 * Progress counts rendering only: a job first waits `queued` at 0 %, so the remaining time
 * extrapolated from its creation runs long by about its queued time (a tenth or so of the
 * whole). Without this share taken off, the look after the end comes seconds late.
 */
const QUEUED_SHARE = 0.1;
/** ±20 %, so that many waiting items do not look in lockstep. */
const JITTER = 0.2;

/**
 * How long to wait before the next lookup of a running job.
 *
 * The first look is placed at the job's expected completion (so most jobs cost one lookup).
 * When the service reports progress, the next look is at the end it implies, sooner or later
 * than a backoff would be (looks that find a long job still running cost requests and nothing
 * else). Without progress, each later look backs off from a step of a sixth of the expected
 * time, with jitter.
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
	const backoff = Math.min(Math.max(MIN_REPOLL_MS, expectedMs / 6) * BACKOFF_FACTOR ** (attempt - 1), MAX_REPOLL_MS);
	if (progress !== undefined && progress > 0 && progress < 100) {
		const remaining = (elapsedMs * (100 - progress)) / progress;
		// The end the progress implies is the best guess there is, nearer or farther than the
		// backoff: look right then, never before it (an early look finds the job still running).
		const step = Math.min(Math.max(MIN_NEAR_END_MS, remaining * (1 - QUEUED_SHARE)), MAX_REPOLL_MS);
		return Math.round(step * (1 + NEAR_END_MARGIN * random()));
	}
	const jitter = 1 + JITTER * (2 * random() - 1);
	return Math.round(backoff * jitter);
}
