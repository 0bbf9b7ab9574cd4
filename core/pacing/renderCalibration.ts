import { perKey } from './perKey';

/** How many recent jobs the calibration remembers. */
const SAMPLES = 50;
/** Below this many finished jobs, the estimate is used as it is. */
const MIN_SAMPLES = 3;
/**
 * Below this many, the learned times are too few to stand for a distribution (its spread would
 * be a guess): the schedule keeps to one typical time.
 */
const MIN_DISTRIBUTION_SAMPLES = 5;
/**
 * The spec's 30–90 s allows at most a factor of 3 between a job and its estimate. A ratio beyond
 * that says nothing about render times: the service's clock runs at another pace than ours (a
 * sped-up sandbox) or the expected time given was far off; it is not learned.
 */
const MAX_RATIO = 3;

/**
 * Learns, per API key, how long jobs really take compared with what was expected, from the
 * `createdAt` and `completedAt` of jobs seen done. The spec's 30–90 s is a wide range and an
 * account's jobs are often consistently faster or slower than its middle: a first look placed at
 * the learned median is done more often, which saves lookups and notices ends sooner. Once enough
 * jobs were seen, their times stand for the key's distribution (learnedTimes), by which the
 * polling schedule places every look (learnedLooks.ts).
 */
export class RenderCalibration {
	private ratios: number[] = [];

	/** A job expected to take `expectedMs` took `actualMs`. */
	record(expectedMs: number, actualMs: number): void {
		const ratio = actualMs / expectedMs;
		if (!(ratio >= 1 / MAX_RATIO && ratio <= MAX_RATIO)) return;
		this.ratios.push(ratio);
		if (this.ratios.length > SAMPLES) this.ratios.shift();
	}

	/** The expected time corrected by what this key's jobs have taken. */
	calibrated(expectedMs: number): number {
		if (this.ratios.length < MIN_SAMPLES) return expectedMs;
		const sorted = [...this.ratios].sort((a, b) => a - b);
		return expectedMs * sorted[Math.floor(sorted.length / 2)];
	}

	/**
	 * The render times this key's recent jobs would have taken at this job's size (each job's
	 * ratio to its own estimate, times this one's), for placing looks by their spread rather than
	 * their middle alone; undefined while too few jobs were seen.
	 */
	learnedTimes(expectedMs: number): number[] | undefined {
		if (this.ratios.length < MIN_DISTRIBUTION_SAMPLES) return undefined;
		return this.ratios.map((ratio) => ratio * expectedMs).sort((a, b) => a - b);
	}
}

/** The calibration for one key in this process, shared like its limiter. */
export const sharedCalibration = perKey(() => new RenderCalibration());
