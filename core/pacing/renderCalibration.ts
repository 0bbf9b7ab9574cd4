import { perKey } from './perKey';
import { estimatedRatios, type RatioObservation } from './censoredTimes';

/** How many recent ended jobs the calibration remembers. */
const SAMPLES = 50;
/** How many running jobs it follows at most (a batch's jobs; the oldest is dropped beyond). */
const RUNNING = 1_000;
/** Below this many finished jobs, the estimate is used as it is. */
const MIN_SAMPLES = 3;
/**
 * The spec's 30–90 s allows at most a factor of 3 between a job and its estimate. A ratio beyond
 * that says nothing about render times: the service's clock runs at another pace than ours (a
 * sped-up sandbox) or the expected time given was far off; it is not learned.
 */
const MAX_RATIO = 3;

const plausible = (ratio: number) => ratio >= 1 / MAX_RATIO && ratio <= MAX_RATIO;

/**
 * Learns, per API key, how long jobs really take compared with what was expected: from the
 * `createdAt` and `completedAt` of jobs seen done, and from the jobs still running (how long they
 * have run at least, when a look last found them running). The spec's 30–90 s is a wide range and
 * an account's jobs are often consistently faster or slower than its middle. learnedTimes gives
 * the distribution by which the polling schedule places every look (learnedLooks.ts), from the
 * key's first job on: before anything is learned it is the prior of censoredTimes.ts.
 */
export class RenderCalibration {
	private ratios: number[] = [];
	/** Jobs still running: the ratio each was last seen running at. */
	private readonly running = new Map<string, number>();

	/** A job expected to take `expectedMs` took `actualMs`. */
	record(expectedMs: number, actualMs: number, jobId?: string): void {
		if (jobId !== undefined) this.running.delete(jobId);
		const ratio = actualMs / expectedMs;
		if (!plausible(ratio)) return;
		this.ratios.push(ratio);
		if (this.ratios.length > SAMPLES) this.ratios.shift();
	}

	/** A look found job `jobId` (expected to take `expectedMs`) still running `elapsedMs` after its creation. */
	seenRunning(jobId: string, expectedMs: number, elapsedMs: number): void {
		// Running beyond the largest plausible ratio, it took at least that (a sped-up clock aside:
		// a ratio this small is not learned, a look that early says nothing).
		const ratio = Math.min(elapsedMs / expectedMs, MAX_RATIO);
		if (!plausible(ratio)) return;
		this.running.delete(jobId);
		this.running.set(jobId, ratio);
		if (this.running.size > RUNNING) this.running.delete(this.running.keys().next().value as string);
	}

	/** Nothing here will see job `jobId` end (it failed, or its waiting gave up): it no longer counts. */
	forget(jobId: string): void {
		this.running.delete(jobId);
	}

	/** The expected time corrected by what this key's jobs have taken. */
	calibrated(expectedMs: number): number {
		if (this.ratios.length < MIN_SAMPLES) return expectedMs;
		const sorted = [...this.ratios].sort((a, b) => a - b);
		return expectedMs * sorted[Math.floor(sorted.length / 2)];
	}

	/**
	 * The render times this key's jobs would take at this job's size (`expectedMs`), as points of
	 * the distribution learned so far (jobs ended, jobs still running, the prior), sorted. Asked
	 * for job `forJobId`, that job itself is left out: the schedule knows it still runs already, and
	 * counting it would stretch the distribution just past wherever it stands, look after look.
	 */
	learnedTimes(expectedMs: number, forJobId?: string): number[] {
		const observations: RatioObservation[] = [...this.ratios.map((ratio) => ({ ratio, ended: true }))];
		for (const [jobId, ratio] of this.running) if (jobId !== forJobId) observations.push({ ratio, ended: false });
		return estimatedRatios(observations).map((ratio) => ratio * expectedMs);
	}
}

/** The calibration for one key in this process, shared like its limiter. */
export const sharedCalibration = perKey(() => new RenderCalibration());
