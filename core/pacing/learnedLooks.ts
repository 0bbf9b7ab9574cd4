/**
 * Where to look at a running job when the key's render times are known as a distribution (the
 * times its recent jobs of this size really took), rather than as one typical time.
 *
 * A look costs a request; a look after the job's end leaves its place among the plan's jobs idle
 * from the end to the look (and the caller waiting). The look times here minimise the expected
 * idle time plus `lookCostMs` for every look, given that the job is still running now: a dynamic
 * programme over the learned distribution. A wide distribution gets a first look before its middle
 * and then closer looks; a narrow one gets one look near its top.
 */

/** Points at which the dynamic programme may place a look, across the learned range. */
const GRID_POINTS = 64;

/**
 * The learned render times as a continuous distribution: the CDF is linear between the sorted
 * samples (the i-th of n at i/(n+1)), from one mean spacing below the shortest to one above the
 * longest. A look exactly at a sample time is no better than one next to it: the next job will not
 * take exactly as long as any earlier one did.
 */
export class RenderDistribution {
	private readonly xs: number[];
	private readonly ps: number[];
	/** ∫ F from the first point to each point, for the idle integral. */
	private readonly areas: number[];

	constructor(samplesMs: readonly number[]) {
		const sorted = [...samplesMs].sort((a, b) => a - b);
		const n = sorted.length;
		if (n === 0) throw new Error('RenderDistribution needs at least one sample');
		// One mean spacing beyond either end, at least 1 % of the shortest time, so that a key whose
		// jobs all took the same time still has a range (a look a little after it, not exactly at it).
		const spacing = Math.max((sorted[n - 1] - sorted[0]) / Math.max(1, n - 1), sorted[0] * 0.01, 1);
		this.xs = [sorted[0] - spacing, ...sorted, sorted[n - 1] + spacing];
		this.ps = [0, ...sorted.map((_, i) => (i + 1) / (n + 1)), 1];
		this.areas = [0];
		for (let i = 1; i < this.xs.length; i++) {
			this.areas.push(this.areas[i - 1] + ((this.ps[i - 1] + this.ps[i]) / 2) * (this.xs[i] - this.xs[i - 1]));
		}
	}

	/** The shortest time the distribution allows. */
	get lowMs(): number {
		return this.xs[0];
	}

	/** The longest time the distribution allows: a job running past it is outside what was learned. */
	get highMs(): number {
		return this.xs[this.xs.length - 1];
	}

	/** The median render time. */
	get medianMs(): number {
		return this.quantile(0.5);
	}

	/** P(render time ≤ x). */
	cdf(x: number): number {
		if (x <= this.xs[0]) return 0;
		if (x >= this.highMs) return 1;
		const i = this.segment(x);
		const [x0, x1, p0, p1] = [this.xs[i], this.xs[i + 1], this.ps[i], this.ps[i + 1]];
		return x1 === x0 ? p1 : p0 + ((p1 - p0) * (x - x0)) / (x1 - x0);
	}

	quantile(p: number): number {
		for (let i = 1; i < this.ps.length; i++) {
			if (this.ps[i] >= p) {
				const [x0, x1, p0, p1] = [this.xs[i - 1], this.xs[i], this.ps[i - 1], this.ps[i]];
				return p1 === p0 ? x1 : x0 + ((x1 - x0) * (p - p0)) / (p1 - p0);
			}
		}
		return this.highMs;
	}

	/**
	 * E[(c − T); t < T ≤ c]: the idle time a look at `c` leaves, summed over the jobs that end
	 * after `t` and by `c` (weighted by their probability). Integrated by parts: ∫ₜᶜ (F(x) − F(t)) dx.
	 */
	idleBetween(t: number, c: number): number {
		return this.area(c) - this.area(t) - (c - t) * this.cdf(t);
	}

	/** ∫ F from the lowest point to x (F is 1 beyond the highest). */
	private area(x: number): number {
		if (x <= this.xs[0]) return 0;
		if (x >= this.highMs) return this.areas[this.areas.length - 1] + (x - this.highMs);
		const i = this.segment(x);
		const p = this.cdf(x);
		return this.areas[i] + ((this.ps[i] + p) / 2) * (x - this.xs[i]);
	}

	/** The index i with xs[i] ≤ x < xs[i + 1] (x inside the range). */
	private segment(x: number): number {
		let lo = 0;
		let hi = this.xs.length - 1;
		while (hi - lo > 1) {
			const mid = (lo + hi) >> 1;
			if (this.xs[mid] <= x) lo = mid;
			else hi = mid;
		}
		return lo;
	}
}

/**
 * The time (from the job's creation) of the next look at a job still running `elapsedMs` after
 * its creation, at least `minStepMs` from now; undefined when the job has run past everything
 * learned (the caller backs off then: the distribution has nothing more to say).
 */
export function nextLearnedLookMs(input: {
	distribution: RenderDistribution;
	elapsedMs: number;
	/** What one look is worth in idle milliseconds: higher means fewer looks, later news. */
	lookCostMs: number;
	minStepMs: number;
}): number | undefined {
	const { distribution: d, elapsedMs, lookCostMs, minStepMs } = input;
	if (elapsedMs >= d.highMs) return undefined;
	const from = Math.max(elapsedMs, d.lowMs);
	// Candidates: the grid from where the job stands to the top of the range. The top itself is
	// always one: a look there is certain (within what was learned) to find the job ended.
	const step = (d.highMs - from) / GRID_POINTS;
	const grid = Array.from({ length: GRID_POINTS + 1 }, (_, k) => from + k * step);
	const survival = grid.map((x) => 1 - d.cdf(x));
	// cost[k]: expected idle + lookCostMs per look still to come, for a job still running at grid[k].
	const cost = new Array<number>(grid.length).fill(0);
	for (let k = grid.length - 2; k >= 0; k--) cost[k] = bestNext(d, grid, survival, cost, grid[k], survival[k], minStepMs, lookCostMs).cost;
	const sNow = 1 - d.cdf(elapsedMs);
	if (sNow <= 0) return undefined;
	// A first look may be due already (the job was created long ago): then it is now.
	const next = bestNext(d, grid, survival, cost, elapsedMs, sNow, minStepMs, lookCostMs).at;
	return Math.max(next, elapsedMs + minStepMs);
}

/** The best next look from a job still running at `t` (survival `sT`), among the grid points. */
function bestNext(
	d: RenderDistribution,
	grid: number[],
	survival: number[],
	cost: number[],
	t: number,
	sT: number,
	minStepMs: number,
	lookCostMs: number,
): { at: number; cost: number } {
	let best = { at: Math.max(d.highMs, t + minStepMs), cost: Infinity };
	if (sT <= 0) return { at: best.at, cost: 0 };
	for (let j = 0; j < grid.length; j++) {
		if (grid[j] < t + minStepMs || grid[j] <= t) continue;
		const value = lookCostMs + (d.idleBetween(t, grid[j]) + survival[j] * cost[j]) / sT;
		if (value < best.cost) best = { at: grid[j], cost: value };
	}
	if (best.cost === Infinity) {
		// No grid point far enough: one look at least minStepMs on, past the top of the range.
		const at = Math.max(d.highMs, t + minStepMs);
		best = { at, cost: lookCostMs + d.idleBetween(t, at) / sT };
	}
	return best;
}
