import { physicalLimit } from '../../bench/measure';
import { slidingWindowFloorMs } from '../../bench/slidingFloor';
import { PLANS } from '../../core/types';

const HOUR_MS = 3_600_000;

describe('slidingWindowFloorMs', () => {
	it('is the places-bound time when the windows never bind', () => {
		// Two places, three 40 s jobs: the third starts when the first ends; lookups at each end.
		const limits = { requestsPerMinute: 100, requestsPerHour: 1000, concurrentJobs: 2 };
		expect(slidingWindowFloorMs([40_000, 40_000, 40_000], limits, 1)).toBe(80_000);
		expect(slidingWindowFloorMs([40_000, 40_000, 40_000], limits, 0)).toBe(80_000);
	});

	it('sends the request past the hour one hour after the first one', () => {
		// Four requests an hour, two jobs of 1 s, a lookup each: the fifth request does not exist,
		// the fourth goes at once; with three jobs (six requests) the fifth waits for the first to leave.
		const limits = { requestsPerMinute: 100, requestsPerHour: 4, concurrentJobs: 10 };
		expect(slidingWindowFloorMs([1_000, 1_000], limits, 1)).toBe(1_000);
		expect(slidingWindowFloorMs([1_000, 1_000, 1_000], limits, 1)).toBe(HOUR_MS);
	});

	it('takes longer than the whole-window bound once a create and a lookup a job pass the hour', () => {
		// Premium's 500 jobs of 37 s: the second hour's requests wait for the first hour's to leave.
		const renders = Array.from({ length: 500 }, (_, i) => 30_000 + ((i * 7_919) % 28_000));
		const floor = slidingWindowFloorMs(renders, PLANS.premium, 1);
		expect(physicalLimit(renders, PLANS.premium).limitMs).toBe(HOUR_MS);
		expect(floor).toBeGreaterThan(1.2 * HOUR_MS);
		expect(floor).toBeLessThan(1.5 * HOUR_MS);
		// With signed callbacks (no lookups) the 500 creates fit in the hour: the places bind.
		expect(slidingWindowFloorMs(renders, PLANS.premium, 0)).toBe(physicalLimit(renders, PLANS.premium).makespanMs);
	});
});
