import { PLANS, type PlanLimits } from '../core/types';
import { startSandbox, type Sandbox } from '../sandbox';
import { measureBatch, type BatchResult } from './measure';
import type { BatchSetup, StrategyOutcome } from './strategies';
import type { RenderTimeModel } from '../sandbox/renderTimes';
import { VirtualTime } from '../test/support/virtualTime';
import type { ServiceProfileName } from '../sandbox/service';

export interface BenchPlan {
	name: 'Pro' | 'Premium';
	limits: PlanLimits;
	key: (sandbox: Sandbox) => string;
}

export const BENCH_PLANS: BenchPlan[] = [
	{ name: 'Pro', limits: PLANS.pro, key: (sandbox) => sandbox.keys.pro },
	{ name: 'Premium', limits: PLANS.premium, key: (sandbox) => sandbox.keys.premium },
];

export interface SideBySideOptions {
	rows: number;
	speed: number;
	/** The sandbox's render-time draws: the same seed gives every strategy the same render times. */
	renderTimes: RenderTimeModel;
	/** False: the sandbox reports no progress, as the real service may not (default true). */
	reportProgress?: boolean;
	/** How the run's render times are drawn, for the tables: `uniform`, `log-normal`. */
	distribution?: string;
	/**
	 * On virtual time (test/support/virtualTime.ts): the sandbox's clock stands still while any
	 * request is in flight, so real latency adds nothing and a run gives the same figures each time
	 * (bar the schedule's jitter). Core's strategies only.
	 */
	virtual?: boolean;
	/** The sandbox's reading of the spec (`spec`: no X-RateLimit-*, bare 429s...); unset, docs/api.md's decisions. */
	service?: ServiceProfileName;
}

/**
 * One strategy on one plan, in a sandbox of its own started afresh: the same seed and the same
 * order of creates give every strategy the same render times.
 */
export async function runBatch(
	strategy: string,
	plan: BenchPlan,
	options: SideBySideOptions,
	run: (setup: BatchSetup) => Promise<StrategyOutcome>,
	clientClock: 'real' | 'sandbox' = 'sandbox',
	note?: string,
): Promise<BatchResult> {
	const sandbox = await startSandbox({
		port: 0,
		speed: options.virtual ? 0 : options.speed,
		insecureCallbacks: true,
		clientClock,
		renderTimes: options.renderTimes,
		reportProgress: options.reportProgress ?? true,
		...(options.service ? { service: options.service } : {}),
	});
	try {
		const startedAt = sandbox.clock.now();
		const realStart = Date.now();
		const virtual = options.virtual ? new VirtualTime(sandbox.clock) : undefined;
		const running = run({ sandbox, apiKey: plan.key(sandbox), limits: plan.limits, rows: options.rows, speed: options.speed, virtual });
		const outcome = await (virtual ? virtual.run(running) : running);
		return measureBatch({
			sandbox,
			strategy,
			plan: plan.name,
			limits: plan.limits,
			rows: options.rows,
			startedAt,
			known: outcome.known,
			surfaced429: outcome.surfaced429,
			failedRows: outcome.failedRows,
			realMs: Date.now() - realStart,
			note,
			distribution: options.distribution,
		});
	} finally {
		await sandbox.close();
	}
}
