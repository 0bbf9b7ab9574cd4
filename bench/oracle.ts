/**
 * The best polling there can be without progress: core's own schedule (the dynamic programme of
 * core/pacing/learnedLooks.ts) handed the render-time distribution the sandbox really draws from,
 * exactly, from the batch's first job on, and never changing its mind. Core's polling learns the
 * same distribution from a prior and the jobs it sees; the gap between the two, at equal requests
 * a job, is what learning costs (issue 24 item 5: at most 3 %).
 */
import { RenderCalibration } from '../core/pacing/renderCalibration';
import { RenderTimes, type RenderTimeModel } from '../sandbox/renderTimes';
import { ROW_SIZE, corePolling, type BatchSetup, type StrategyOutcome } from './strategies';
import { expectedRenderSeconds } from '../core/pacing/estimate';

/** Draws of the sandbox's model used to find its quantiles: the distribution, not this batch's draws. */
const DRAWS = 20_000;
/** Quantiles handed to the schedule. */
const POINTS = 200;

/** The render times (ms) the sandbox draws for the bench's row size, as POINTS quantiles. */
export function trueRenderQuantiles(model: RenderTimeModel): number[] {
	// Another seed than the batch's: the oracle knows the distribution, not the draws to come.
	const times = new RenderTimes({ ...model, seed: model.seed + 7_919 });
	const draws = Array.from({ length: DRAWS }, () => times.next(ROW_SIZE.resolution, ROW_SIZE.duration)).sort((a, b) => a - b);
	return Array.from({ length: POINTS }, (_, i) => draws[Math.floor(((i + 0.5) / POINTS) * DRAWS)]);
}

/** A calibration that knows the distribution and learns nothing. */
class KnownDistribution extends RenderCalibration {
	constructor(private readonly quantilesMs: number[]) {
		super();
	}

	override learnedTimes(expectedMs: number): number[] {
		// The schedule asks at the job's estimate; the quantiles are absolute (the same row size throughout).
		const estimateMs = expectedRenderSeconds(ROW_SIZE.resolution, ROW_SIZE.duration) * 1000;
		return this.quantilesMs.map((ms) => (ms * expectedMs) / estimateMs);
	}
}

/** Core's polling with the distribution known exactly (see above), at the given look cost. */
export function oraclePolling(setup: BatchSetup, model: RenderTimeModel, lookCostShare?: number): Promise<StrategyOutcome> {
	return corePolling(setup, lookCostShare, new KnownDistribution(trueRenderQuantiles(model)));
}
