import type { Random } from '../http/transport';
import { RenderDistribution, nextLearnedLookMs } from './learnedLooks';

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
 * What one look is worth, as a share of the key's median render time, in idle time: the learned
 * schedule spends a look where it saves at least this much expected idle. Chosen on the bench's
 * trade-off curve (bench/results/tradeoff.svg): lower buys less idle with more requests, higher the
 * reverse.
 */
export const DEFAULT_LOOK_COST_SHARE = 0.15;
/**
 * Up to 2 % of the step later, never earlier, on learned looks: enough to spread items created
 * together, small because the looks are placed where they pay. Never early: for a key whose jobs
 * all take about the same time the look sits just after that time, and an early one would find
 * the job running and cost a second look.
 */
const LEARNED_JITTER = 0.02;
/** Past everything learned, each look waits at least this share of the time run past it. */
const OVERRUN_SHARE = 0.5;

/**
 * How long to wait before the next lookup of a running job.
 *
 * When the service reports progress, the next look is at the end it implies, sooner or later
 * than anything else would place it. Otherwise, given the key's render-time distribution
 * (`learnedMs`: from the key's first job on, see renderCalibration.ts), every look, the first
 * included, is where the expected idle time plus the cost of the looks still to come is lowest
 * given that the job still runs (see learnedLooks.ts); a job running past everything learned backs
 * off. Without a distribution, the first look is at the job's expected completion and each later
 * one backs off from a step of a sixth of the expected time, with jitter.
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
	/** The render times this key's recent jobs would have taken at this job's size, if known. */
	learnedMs?: readonly number[];
	/** One look's worth as a share of the learned median (DEFAULT_LOOK_COST_SHARE). */
	lookCostShare?: number;
	random: Random;
}): number {
	const { attempt, expectedMs, elapsedMs, progress, learnedMs, random } = input;
	if (progress !== undefined && progress > 0 && progress < 100) {
		const remaining = (elapsedMs * (100 - progress)) / progress;
		// The end the progress implies is the best guess there is, nearer or farther than the
		// backoff: look right then, never before it (an early look finds the job still running).
		const step = Math.min(Math.max(MIN_NEAR_END_MS, remaining * (1 - QUEUED_SHARE)), MAX_REPOLL_MS);
		return Math.round(step * (1 + NEAR_END_MARGIN * random()));
	}
	if (learnedMs !== undefined && learnedMs.length > 0) {
		const learned = learnedDelayMs({ ...input, learnedMs });
		if (learned !== undefined) return learned;
		// Running past everything learned: the distribution says nothing more, so back off in
		// proportion to the overrun (stateless, yet growing geometrically from look to look).
		const overrun = elapsedMs - new RenderDistribution(learnedMs).highMs;
		const step = Math.min(Math.max(MIN_REPOLL_MS, expectedMs / 6, overrun * OVERRUN_SHARE), MAX_REPOLL_MS);
		return Math.round(step * (1 + JITTER * (2 * random() - 1)));
	}
	if (attempt === 0) return Math.max(0, expectedMs - elapsedMs);
	const backoff = Math.min(Math.max(MIN_REPOLL_MS, expectedMs / 6) * BACKOFF_FACTOR ** (attempt - 1), MAX_REPOLL_MS);
	const jitter = 1 + JITTER * (2 * random() - 1);
	return Math.round(backoff * jitter);
}

/** The learned schedule's next delay, or undefined past everything learned. */
function learnedDelayMs(input: {
	attempt: number;
	elapsedMs: number;
	learnedMs: readonly number[];
	lookCostShare?: number;
	random: Random;
}): number | undefined {
	const distribution = new RenderDistribution(input.learnedMs);
	// The first look may come at any time; a look after one that found the job running keeps
	// the usual least step, so that a narrow distribution never has items look every second.
	const minStepMs = input.attempt === 0 ? 0 : MIN_REPOLL_MS;
	const at = nextLearnedLookMs({
		distribution,
		elapsedMs: input.elapsedMs,
		lookCostMs: (input.lookCostShare ?? DEFAULT_LOOK_COST_SHARE) * distribution.medianMs,
		minStepMs,
	});
	if (at === undefined) return undefined;
	const step = (at - input.elapsedMs) * (1 + LEARNED_JITTER * input.random());
	const maxStepMs = input.attempt === 0 ? Infinity : MAX_REPOLL_MS;
	return Math.round(Math.min(Math.max(step, minStepMs), maxStepMs));
}
