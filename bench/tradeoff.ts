import type { BatchResult } from './measure';
import { corePolling, naiveLoop, type BatchSetup, type StrategyOutcome } from './strategies';
import { DEFAULT_LOOK_COST_SHARE } from '../core/pacing/pollSchedule';
import { STRATEGIES, perJob, ratio } from './targets';
import { oraclePolling } from './oracle';
import type { SideBySideOptions } from './sideBySide';

/** One run on the trade-off curve: how close to the limit, for how many requests a job. */
export interface TradeoffPoint {
	plan: string;
	distribution: string;
	/**
	 * `core` (learned schedule, no progress), `oracle` (the same schedule knowing the distribution
	 * exactly, bench/oracle.ts), `core+progress`, `naive` (the plan's jobs at once), `naive-all`
	 * (every row at once).
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
	run: (setup: BatchSetup, options: SideBySideOptions) => Promise<StrategyOutcome>;
}

const share = (value: number) => `look cost ${value} of the median`;
const oracleShare = (value: number) => `oracle (distribution known), ${share(value)}`;
/** The look costs the oracle's curve is drawn at: core's default among them. */
const ORACLE_SHARES = [0.05, 0.1, DEFAULT_LOOK_COST_SHARE, 0.3];
/** Issue 24 item 5: core's polling within this much of the oracle's wall ÷ limit at equal requests a job. */
export const ORACLE_MARGIN = 0.03;

/**
 * Core's schedule at other look costs (the default's point comes from the side-by-side), the
 * default with progress reported, and the naive loop a user builds on the plan's jobs at once.
 */
export const TRADEOFF_VARIANTS: TradeoffVariant[] = [
	...[0.05, 0.1, 0.3].map((value): TradeoffVariant => ({ family: 'core', variant: share(value), progress: false, run: (s) => corePolling(s, value) })),
	...ORACLE_SHARES.map((value): TradeoffVariant => ({
		family: 'oracle',
		variant: oracleShare(value),
		progress: false,
		run: (s, options) => oraclePolling(s, options.renderTimes, value),
	})),
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

/** Core's default polling against the oracle's curve, for one plan and distribution. */
export interface OracleComparison {
	plan: string;
	distribution: string;
	core: { ratio: number; perJob: number };
	/** The oracle's wall ÷ limit at core's requests a job, read off its curve (linear between its points). */
	oracleRatio: number;
	/** True when core's requests a job fall outside the oracle's measured range (the nearest two points extended). */
	extrapolated: boolean;
	met: boolean;
}

/** Issue 24 item 5's check: core's polling within ORACLE_MARGIN of the oracle at equal requests a job. */
export function oracleComparisons(points: TradeoffPoint[]): OracleComparison[] {
	const out: OracleComparison[] = [];
	for (const core of points.filter((p) => p.family === 'core' && p.variant.endsWith('(default)'))) {
		const curve = points.filter((p) => p.family === 'oracle' && p.plan === core.plan && p.distribution === core.distribution).sort((a, b) => a.perJob - b.perJob);
		if (curve.length < 2) continue;
		let i = curve.findIndex((p) => p.perJob >= core.perJob);
		const extrapolated = i <= 0 && !(i === 0 && curve[0].perJob === core.perJob);
		if (i <= 0) i = i === -1 ? curve.length - 1 : 1;
		const [a, b] = [curve[i - 1], curve[i]];
		const oracleRatio = b.perJob === a.perJob ? Math.min(a.ratio, b.ratio) : a.ratio + ((b.ratio - a.ratio) * (core.perJob - a.perJob)) / (b.perJob - a.perJob);
		out.push({
			plan: core.plan,
			distribution: core.distribution,
			core: { ratio: core.ratio, perJob: core.perJob },
			oracleRatio,
			extrapolated,
			met: core.ratio <= oracleRatio * (1 + ORACLE_MARGIN),
		});
	}
	return out;
}
