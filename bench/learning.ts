/**
 * Issue 24 item 5: learning against knowing. Core's polling, which starts a key from a prior on
 * the API's 30–90 s and learns from the jobs it sees (ended and still running), against the oracle
 * (bench/oracle.ts: the same schedule handed the sandbox's render-time distribution exactly), each
 * at several look costs, every run the key's first batch, each variant on BATCHES batches. Both run on virtual time (the sandbox's
 * clock stands still while a request is in flight): at ×50 a millisecond of real latency is 50 ms
 * of render time, and repeated runs there differ by ±4 %, more than the 3 % being measured.
 */
import { DEFAULT_LOOK_COST_SHARE } from '../core/pacing/pollSchedule';
import type { BatchResult } from './measure';
import { oraclePolling } from './oracle';
import { BENCH_PLANS, runBatch, type SideBySideOptions } from './sideBySide';
import { corePolling } from './strategies';
import { perJob, ratio } from './targets';
import { share, type TradeoffPoint } from './tradeoff';

const SHARES = [0.05, 0.1, DEFAULT_LOOK_COST_SHARE, 0.3];
/**
 * Batches (render-time seeds) each variant is run on; the points are their means. One batch's
 * figures move by a few hundredths with the schedule's jitter alone (the order in which looks and
 * ends meet), as much as the margin measured.
 */
const BATCHES = 10;
/** Core's polling within this much of the oracle's wall ÷ limit at equal requests a job. */
export const ORACLE_MARGIN = 0.03;
const coreName = (value: number) => `core, ${share(value)}${value === DEFAULT_LOOK_COST_SHARE ? ' (default)' : ''}`;
const oracleName = (value: number) => `oracle (distribution known), ${share(value)}`;

/** Core and the oracle at every look cost, on both plans, for each distribution given. */
export async function learningRuns(distributions: SideBySideOptions[], show: (r: BatchResult) => void): Promise<BatchResult[]> {
	const results: BatchResult[] = [];
	for (const options of distributions) {
		for (const plan of BENCH_PLANS) for (let batch = 0; batch < BATCHES; batch++) {
			const virtual = { ...options, virtual: true, renderTimes: { ...options.renderTimes, seed: options.renderTimes.seed + batch } };
			for (const value of SHARES) {
				for (const [name, run] of [
					[coreName(value), (s: Parameters<typeof corePolling>[0]) => corePolling(s, value)],
					[oracleName(value), (s: Parameters<typeof corePolling>[0]) => oraclePolling(s, virtual.renderTimes, value)],
				] as const) {
					const result = await runBatch(name, plan, virtual, run);
					results.push(result);
					show(result);
				}
			}
		}
	}
	return results;
}

/** The runs as points of the learning chart: each variant's mean over its batches. */
export function learningPoints(results: BatchResult[]): TradeoffPoint[] {
	const groups = new Map<string, BatchResult[]>();
	for (const r of results) {
		const key = `${r.plan}|${r.distribution ?? 'log-normal'}|${r.strategy}`;
		groups.set(key, [...(groups.get(key) ?? []), r]);
	}
	const mean = (runs: BatchResult[], value: (r: BatchResult) => number) => runs.reduce((sum, r) => sum + value(r), 0) / runs.length;
	return [...groups.values()].map((runs) => ({
		plan: runs[0].plan,
		distribution: runs[0].distribution ?? 'log-normal',
		family: runs[0].strategy.startsWith('oracle') ? 'oracle' : 'core',
		variant: runs[0].strategy,
		ratio: mean(runs, ratio),
		perJob: mean(runs, perJob),
		received429: runs.reduce((sum, r) => sum + r.received429, 0),
	}));
}

/** Core's default polling against the oracle's curve, for one plan and distribution. */
export interface OracleComparison {
	plan: string;
	distribution: string;
	core: { ratio: number; perJob: number };
	/** The oracle's wall ÷ limit at core's requests a job, read off its curve (straight between its points). */
	oracleRatio: number;
	/** Core's requests a job fall outside the oracle's measured range: its nearest two points extended. */
	extrapolated: boolean;
	met: boolean;
}

/** Core's default polling within ORACLE_MARGIN of the oracle at equal requests a job? */
export function oracleComparisons(points: TradeoffPoint[]): OracleComparison[] {
	const out: OracleComparison[] = [];
	for (const core of points.filter((p) => p.family === 'core' && p.variant.endsWith('(default)'))) {
		const curve = points.filter((p) => p.family === 'oracle' && p.plan === core.plan && p.distribution === core.distribution).sort((a, b) => a.perJob - b.perJob);
		if (curve.length < 2) continue;
		const above = curve.findIndex((p) => p.perJob >= core.perJob);
		const extrapolated = above === -1 || (above === 0 && curve[0].perJob > core.perJob);
		const i = above === -1 ? curve.length - 1 : Math.max(1, above);
		const [a, b] = [curve[i - 1], curve[i]];
		const oracleRatio = b.perJob === a.perJob ? Math.min(a.ratio, b.ratio) : a.ratio + ((b.ratio - a.ratio) * (core.perJob - a.perJob)) / (b.perJob - a.perJob);
		out.push({ plan: core.plan, distribution: core.distribution, core: { ratio: core.ratio, perJob: core.perJob }, oracleRatio, extrapolated, met: core.ratio <= oracleRatio * (1 + ORACLE_MARGIN) });
	}
	return out;
}
