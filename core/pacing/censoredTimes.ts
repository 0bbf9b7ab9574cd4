/**
 * A key's render-time distribution from what this process has seen, including the jobs still
 * running, on top of a prior from the API's "30 to 90 seconds".
 *
 * Why the running jobs count: a batch in progress shows its short jobs first. Learning only from
 * the jobs seen ended takes the early, short ones for the whole distribution, and the looks it
 * places come too early for the rest. A job a look found still running says "longer than this":
 * a censored observation, which the Kaplan–Meier estimate weighs as such.
 *
 * Why a prior: before any job of the key has ended there is nothing to learn from, yet the first
 * batch is where most of the waiting is. The prior spreads a few jobs' worth of weight across the
 * API's range as seen from the job's estimate, so the first looks are placed by the same dynamic
 * programme as the later ones, and the tail beyond the last job seen stays where the API puts it.
 */

/** One observation, as a ratio of the render time to the job's estimate. */
export interface RatioObservation {
	ratio: number;
	/** True: the job ended at this ratio; false: it was still running at it (censored). */
	ended: boolean;
}

/**
 * The API's "30 to 90 seconds" as ratios to the estimate of a job in its middle (about 56 s):
 * from 0.55 to 1.6 of the estimate, most likely at it. The estimate moves with the job's size
 * (estimate.ts), so the prior does too.
 */
const PRIOR = { low: 0.55, mode: 1, high: 1.6 } as const;
/** How many jobs the prior is worth: a handful, so that a key's own jobs soon outweigh it. */
const PRIOR_WEIGHT = 3;
/** Points the prior is spread over. */
const PRIOR_POINTS = 24;
/** Where the mass of jobs running past everything seen goes, as a multiple of the longest. */
const OVERRUN_FACTOR = 1.5;
/** Points of the estimated distribution handed to the schedule. */
const OUTPUT_POINTS = 50;

/** The q-quantile of the triangular distribution (low, mode, high). */
function triangularQuantile(q: number): number {
	const { low, mode, high } = PRIOR;
	const split = (mode - low) / (high - low);
	return q < split ? low + Math.sqrt(q * (high - low) * (mode - low)) : high - Math.sqrt((1 - q) * (high - low) * (high - mode));
}

const PRIOR_RATIOS = Array.from({ length: PRIOR_POINTS }, (_, i) => triangularQuantile((i + 0.5) / PRIOR_POINTS));

/**
 * The render-time ratios the key's jobs take, as OUTPUT_POINTS quantiles of the Kaplan–Meier
 * estimate over the prior (weighted PRIOR_WEIGHT jobs), the jobs seen ended and the jobs still
 * running (each at the ratio it was last seen running at). Mass left after the last ended point
 * (everything left still running beyond it) is placed OVERRUN_FACTOR past the longest job seen running.
 */
export function estimatedRatios(observations: readonly RatioObservation[]): number[] {
	const weighted = [
		...PRIOR_RATIOS.map((ratio) => ({ ratio, ended: true, weight: PRIOR_WEIGHT / PRIOR_POINTS })),
		...observations.map((o) => ({ ...o, weight: 1 })),
	].sort((a, b) => a.ratio - b.ratio || Number(b.ended) - Number(a.ended));
	let atRisk = weighted.reduce((sum, o) => sum + o.weight, 0);
	let survival = 1;
	const steps: Array<{ ratio: number; cdf: number }> = [];
	for (const o of weighted) {
		if (o.ended) {
			survival *= 1 - o.weight / atRisk;
			steps.push({ ratio: o.ratio, cdf: 1 - survival });
		}
		atRisk -= o.weight;
	}
	// Jobs still running past every end seen and past the prior: how much longer they take is not
	// known. Their mass goes half as far again as the longest: a job running that long is looked at
	// in steps growing by half, as past anything learned (pollSchedule.ts), not every few seconds.
	const longest = weighted[weighted.length - 1].ratio;
	if (survival > 1e-9) steps.push({ ratio: longest, cdf: 1 - survival }, { ratio: longest * OVERRUN_FACTOR, cdf: 1 });
	// Quantiles of the CDF drawn straight between its steps: read off the steps themselves, a few
	// jobs would repeat as the same points many times over, and the schedule would take each past
	// time for a certainty and look just after it.
	return Array.from({ length: OUTPUT_POINTS }, (_, i) => {
		const p = (i + 0.5) / OUTPUT_POINTS;
		const k = Math.max(0, steps.findIndex((s) => s.cdf >= p - 1e-12));
		const [from, to] = [k > 0 ? steps[k - 1] : { ratio: steps[0].ratio, cdf: 0 }, steps[k]];
		return to.cdf <= from.cdf ? to.ratio : from.ratio + ((to.ratio - from.ratio) * (p - from.cdf)) / (to.cdf - from.cdf);
	});
}
