import type { BatchResult } from './measure';
import { corePolling, naiveLoop, type BatchSetup, type StrategyOutcome } from './strategies';
import { DEFAULT_LOOK_COST_SHARE } from '../core/pacing/pollSchedule';
import { STRATEGIES, perJob, ratio } from './targets';

/** One run on the trade-off curve: how close to the limit, for how many requests a job. */
export interface TradeoffPoint {
	plan: string;
	distribution: string;
	/**
	 * `core` (learned schedule, no progress), `oracle` (the same schedule knowing the distribution
	 * exactly, bench/oracle.ts, on the learning chart only), `core+progress`, `naive` (the plan's
	 * jobs at once), `naive-all` (every row at once).
	 */
	family: 'core' | 'oracle' | 'core+progress' | 'naive' | 'naive-all';
	variant: string;
	ratio: number;
	perJob: number;
	received429: number;
}

/** A polling variant run for the curve only (the side-by-side's own runs are points too). */
export interface TradeoffVariant {
	family: TradeoffPoint['family'];
	variant: string;
	/** Whether the sandbox reports progress for this run. */
	progress: boolean;
	run: (setup: BatchSetup) => Promise<StrategyOutcome>;
}

export const share = (value: number) => `look cost ${value} of the median`;

/**
 * Core's schedule at other look costs (the default's point comes from the side-by-side), the
 * default with progress reported, and the naive loop a user builds on the plan's jobs at once.
 */
export const TRADEOFF_VARIANTS: TradeoffVariant[] = [
	...[0.05, 0.1, 0.3].map((value): TradeoffVariant => ({ family: 'core', variant: share(value), progress: false, run: (s) => corePolling(s, value) })),
	{ family: 'core+progress', variant: `${share(DEFAULT_LOOK_COST_SHARE)}, progress reported`, progress: true, run: (s) => corePolling(s) },
	...[5, 10, 20].map((seconds): TradeoffVariant => ({
		family: 'naive',
		variant: `naive loop, plan's jobs at once, GET every ${seconds} s`,
		progress: false,
		run: (s) => naiveLoop(s, seconds * 1000, s.limits.concurrentJobs),
	})),
];

/** The curve's points: the variants' runs, and the side-by-side's polling and naive loops. */
export function tradeoffPoints(sideBySide: BatchResult[], variants: BatchResult[]): TradeoffPoint[] {
	const point = (r: BatchResult, family: TradeoffPoint['family'], variant: string): TradeoffPoint => ({
		plan: r.plan,
		distribution: r.distribution ?? 'log-normal',
		family,
		variant,
		ratio: ratio(r),
		perJob: perJob(r),
		received429: r.received429,
	});
	const fromSideBySide = sideBySide.flatMap((r) => {
		if (r.strategy === STRATEGIES.polling) return [point(r, 'core', `${share(DEFAULT_LOOK_COST_SHARE)} (default)`)];
		if (r.strategy === STRATEGIES.naive5) return [point(r, 'naive-all', 'naive loop, every row at once, GET every 5 s')];
		if (r.strategy === STRATEGIES.naive10) return [point(r, 'naive-all', 'naive loop, every row at once, GET every 10 s')];
		return [];
	});
	const fromVariants = variants.map((r) => {
		const variant = TRADEOFF_VARIANTS.find((v) => v.variant === r.strategy);
		return point(r, variant?.family ?? 'core', r.strategy);
	});
	return [...fromSideBySide, ...fromVariants].sort((a, b) => a.plan.localeCompare(b.plan) || a.distribution.localeCompare(b.distribution) || a.perJob - b.perJob);
}

