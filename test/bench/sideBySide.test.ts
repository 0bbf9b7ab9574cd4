import { physicalLimit } from '../../bench/measure';
import { BENCH_PLANS, runBatch } from '../../bench/sideBySide';
import { coreCallbacks, corePolling, naiveLoop } from '../../bench/strategies';
import { tradeoffPoints } from '../../bench/tradeoff';
import { tradeoffChart } from '../../bench/tradeoffChart';
import { POLLING_TARGET, STRATEGIES, verdicts } from '../../bench/targets';

const PRO = BENCH_PLANS[0];
const SMALL = { rows: 6, speed: 100, renderTimes: { seed: 3, spread: 0.25 } };

describe("the bench's physical limit", () => {
	it('list-schedules render times on the plan’s slots, in creation order', () => {
		const limits = { requestsPerMinute: 1000, requestsPerHour: 100_000, concurrentJobs: 2 };
		// Slot 1: 30 then 50 (ends 80); slot 2: 60 then 40 (ends 100).
		expect(physicalLimit([30_000, 60_000, 50_000, 40_000], limits)).toMatchObject({ makespanMs: 100_000, limitMs: 100_000 });
	});

	it('is the rate windows’ bound when they are the tighter: one create and one lookup per job', () => {
		// 50 jobs on Pro: 100 requests at 30 a minute, the 100th in the fourth minute.
		const limits = { requestsPerMinute: 30, requestsPerHour: 200, concurrentJobs: 100 };
		expect(physicalLimit(Array.from({ length: 50 }, () => 30_000), limits)).toMatchObject({ makespanMs: 30_000, rateBoundMs: 180_000, limitMs: 180_000 });
	});
});

describe('a small side-by-side batch against the sandbox', () => {
	it('core with signed callbacks: one request a job, no 429, no duplicate, never faster than the limit', async () => {
		const result = await runBatch('signed', PRO, SMALL, (setup) => coreCallbacks(setup, true));
		expect(result).toMatchObject({ jobs: 6, apiRequests: 6, received429: 0, duplicateJobs: 0, unknownJobs: 0, failedRows: 0 });
		expect(result.wallMs).toBeGreaterThanOrEqual(result.limitMs);
		expect(result.knownDelayMedianMs).toBeLessThan(5_000);
	});

	it('the naive loop: every job known, at least a create and a lookup per job, never faster than the limit', async () => {
		const result = await runBatch('naive', PRO, SMALL, (setup) => naiveLoop(setup, 10_000));
		expect(result).toMatchObject({ jobs: 6, duplicateJobs: 0, unknownJobs: 0, failedRows: 0 });
		expect(result.apiRequests).toBeGreaterThanOrEqual(12);
		expect(result.wallMs).toBeGreaterThanOrEqual(result.limitMs);
	});

	it('the naive loop on the plan’s jobs at once never has more jobs rendering than it allows', async () => {
		const result = await runBatch('naive pool', PRO, SMALL, (setup) => naiveLoop(setup, 10_000, 2));
		expect(result).toMatchObject({ jobs: 6, duplicateJobs: 0, unknownJobs: 0, failedRows: 0, received429: 0 });
		// Two at a time: three rounds of render times, so well past the limit of five slots.
		expect(result.wallMs).toBeGreaterThan(1.5 * result.limitMs);
	});

	it('core polling on uniform render times with no progress reported: every job known, no 429', async () => {
		const options = { ...SMALL, renderTimes: { ...SMALL.renderTimes, shape: 'uniform' as const }, reportProgress: false, distribution: 'uniform' };
		const result = await runBatch(STRATEGIES.polling, PRO, options, (setup) => corePolling(setup));
		expect(result).toMatchObject({ jobs: 6, duplicateJobs: 0, unknownJobs: 0, failedRows: 0, received429: 0, distribution: 'uniform' });
		expect(result.apiRequests).toBeGreaterThanOrEqual(12);
		expect(result.wallMs).toBeGreaterThanOrEqual(result.limitMs);
		// The trade-off curve takes it as core's default point, and the chart draws it.
		const [point] = tradeoffPoints([result], []);
		expect(point).toMatchObject({ plan: 'Pro', distribution: 'uniform', family: 'core' });
		expect(tradeoffChart([point], POLLING_TARGET, 'test')).toContain('<circle');
	});
});

describe("the bench's verdicts", () => {
	const run = (strategy: string, distribution: string, wallMs: number, apiRequests: number) => ({
		strategy,
		plan: 'Pro',
		distribution,
		jobs: 50,
		wallMs,
		lastEndMs: wallMs,
		limitMs: 600_000,
		makespanMs: 600_000,
		rateBoundMs: 0,
		apiRequests,
		received429: 0,
		surfaced429: 0,
		failedRows: 0,
		duplicateJobs: 0,
		knownDelayMedianMs: 1_000,
		knownDelayP95Ms: 2_000,
		unknownJobs: 0,
		realMs: 0,
	});

	it('holds polling to ≤ 1.08× the limit at ≤ 2.6 requests a job', () => {
		const [met] = verdicts([run(STRATEGIES.polling, 'uniform', 640_000, 130)]);
		const [slow] = verdicts([run(STRATEGIES.polling, 'uniform', 660_000, 130)]);
		const [dear] = verdicts([run(STRATEGIES.polling, 'uniform', 640_000, 131)]);
		expect([met.met, slow.met, dear.met]).toEqual([true, false, false]);
	});

	it('compares a naive loop with core only on the same render times', () => {
		const naive = run(STRATEGIES.naive5, 'uniform', 700_000, 500);
		const fasterElsewhere = { ...run(STRATEGIES.polling, 'log-normal', 800_000, 130) };
		const checks = verdicts([naive, fasterElsewhere]);
		expect(checks.find((c) => c.strategy === STRATEGIES.naive5)?.met).toBe(true);
	});
});
