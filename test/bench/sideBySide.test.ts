import { physicalLimit } from '../../bench/measure';
import { BENCH_PLANS, runBatch } from '../../bench/sideBySide';
import { coreCallbacks, naiveLoop } from '../../bench/strategies';

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
});
