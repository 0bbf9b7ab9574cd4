import { RenderDistribution, nextLearnedLookMs } from '../../core/pacing/learnedLooks';
import { DEFAULT_LOOK_COST_SHARE, nextPollDelayMs } from '../../core/pacing/pollSchedule';
import { RenderCalibration } from '../../core/pacing/renderCalibration';

/** n render times evenly across lo–hi (ms): a key whose jobs spread as widely as the API allows. */
const evenly = (n: number, lo: number, hi: number) => Array.from({ length: n }, (_, i) => lo + ((hi - lo) * i) / (n - 1));
const WIDE = evenly(50, 30_000, 90_000);
const NARROW = Array.from({ length: 20 }, () => 60_000);

/** The looks a job would get from creation until one at or after `renderMs` (no jitter). */
function looksUntil(learnedMs: number[], renderMs: number, lookCostShare = DEFAULT_LOOK_COST_SHARE): number[] {
	const looks: number[] = [];
	let at = 0;
	for (let attempt = 0; looks.length < 50; attempt++) {
		at += nextPollDelayMs({ attempt, expectedMs: 60_000, elapsedMs: at, learnedMs, lookCostShare, random: () => 0.5 });
		looks.push(at);
		if (at >= renderMs) return looks;
	}
	throw new Error('never looked after the end');
}

describe('the learned render-time distribution', () => {
	it('spreads its probability across the samples, a spacing beyond either end', () => {
		const d = new RenderDistribution(WIDE);
		expect(d.cdf(d.lowMs)).toBe(0);
		expect(d.cdf(d.highMs)).toBe(1);
		expect(d.lowMs).toBeLessThan(30_000);
		expect(d.highMs).toBeGreaterThan(90_000);
		expect(d.medianMs).toBeCloseTo(60_000, -2);
		expect(d.cdf(45_000)).toBeCloseTo(0.25, 1);
		expect(d.quantile(d.cdf(70_000))).toBeCloseTo(70_000, -1);
	});

	it('gives the expected idle of a look as the integral of the CDF', () => {
		const d = new RenderDistribution(WIDE);
		// Numerically: E[(c − T); t < T ≤ c] with T drawn from the CDF.
		const [t, c] = [40_000, 70_000];
		let numeric = 0;
		for (let x = t; x < c; x += 10) numeric += (c - x - 5) * (d.cdf(x + 10) - d.cdf(x));
		expect(d.idleBetween(t, c)).toBeCloseTo(numeric, -1);
		// About (30 s)² / 2 / 60 s for a uniform spread: 7.5 s.
		expect(d.idleBetween(t, c)).toBeGreaterThan(7_000);
		expect(d.idleBetween(t, c)).toBeLessThan(8_000);
	});

	it('keeps a range when every job took the same time', () => {
		const d = new RenderDistribution(NARROW);
		expect(d.highMs).toBeGreaterThan(60_000);
		expect(d.lowMs).toBeLessThan(60_000);
	});
});

describe('looks placed by the learned distribution', () => {
	it('takes the first look at a wide spread before its middle, where the expected idle per look is lowest', () => {
		const first = nextLearnedLookMs({ distribution: new RenderDistribution(WIDE), elapsedMs: 0, lookCostMs: 6_000, minStepMs: 0 });
		expect(first).toBeGreaterThan(35_000);
		expect(first).toBeLessThan(60_000);
	});

	it('takes one look just after a narrow spread, not one at its middle', () => {
		expect(looksUntil(NARROW, 60_000)).toHaveLength(1);
		expect(looksUntil(NARROW, 60_000)[0]).toBeGreaterThanOrEqual(60_000);
		expect(looksUntil(NARROW, 60_000)[0]).toBeLessThan(62_000);
	});

	it('looks again at successive points of what remains, closer together as the end nears', () => {
		const looks = looksUntil(WIDE, 89_000);
		const steps = looks.slice(1).map((at, i) => at - looks[i]);
		expect(looks.length).toBeGreaterThanOrEqual(3);
		// Later looks come sooner after the one before: fewer jobs are left to find still running.
		expect(steps[steps.length - 1]).toBeLessThan(steps[0]);
		expect(Math.max(...steps)).toBeLessThanOrEqual(60_000);
	});

	it('spends fewer looks and later ones when a look is worth more', () => {
		const cheap = nextLearnedLookMs({ distribution: new RenderDistribution(WIDE), elapsedMs: 0, lookCostMs: 2_000, minStepMs: 0 }) ?? NaN;
		const dear = nextLearnedLookMs({ distribution: new RenderDistribution(WIDE), elapsedMs: 0, lookCostMs: 20_000, minStepMs: 0 }) ?? NaN;
		expect(cheap).toBeLessThan(dear);
		const meanLooks = (share: number) => WIDE.reduce((sum, ms) => sum + looksUntil(WIDE, ms, share).length, 0) / WIDE.length;
		expect(meanLooks(0.05)).toBeGreaterThan(meanLooks(0.3));
	});

	it('spends fewer looks than the single typical time with its backoff, for less expected idle', () => {
		let [learnedLooks, learnedIdle, typicalLooks, typicalIdle] = [0, 0, 0, 0];
		for (const renderMs of WIDE) {
			const learned = looksUntil(WIDE, renderMs);
			learnedLooks += learned.length;
			learnedIdle += learned[learned.length - 1] - renderMs;
			let at = 0;
			for (let attempt = 0; at < renderMs; attempt++) {
				at += nextPollDelayMs({ attempt, expectedMs: 60_000, elapsedMs: at, random: () => 0.5 });
				typicalLooks++;
			}
			typicalIdle += at - renderMs;
		}
		expect(learnedLooks).toBeLessThanOrEqual(typicalLooks);
		expect(learnedIdle).toBeLessThan(typicalIdle);
	});

	it('never looks again sooner than the least step after a look that found the job running', () => {
		const next = nextLearnedLookMs({ distribution: new RenderDistribution(WIDE), elapsedMs: 88_000, lookCostMs: 100, minStepMs: 5_000 }) ?? NaN;
		expect(next).toBeGreaterThanOrEqual(93_000);
		expect(nextPollDelayMs({ attempt: 3, expectedMs: 60_000, elapsedMs: 89_000, learnedMs: WIDE, lookCostShare: 0.001, random: () => 0 })).toBeGreaterThanOrEqual(5_000);
	});

	it('has nothing to say past everything learned: the schedule backs off by the overrun, at most 60 s', () => {
		const d = new RenderDistribution(WIDE);
		expect(nextLearnedLookMs({ distribution: d, elapsedMs: d.highMs + 1, lookCostMs: 6_000, minStepMs: 5_000 })).toBeUndefined();
		const base = { attempt: 4, expectedMs: 60_000, learnedMs: WIDE, random: () => 0.5 };
		const soon = nextPollDelayMs({ ...base, elapsedMs: d.highMs + 1_000 });
		const later = nextPollDelayMs({ ...base, elapsedMs: d.highMs + 60_000 });
		expect(soon).toBe(10_000);
		expect(later).toBe(30_000);
		expect(nextPollDelayMs({ ...base, elapsedMs: d.highMs + 600_000 })).toBe(60_000);
	});

	it('jitters each learned look up to 2 % later, never earlier, so that items created together do not look together', () => {
		const at = (random: number) => nextPollDelayMs({ attempt: 0, expectedMs: 60_000, elapsedMs: 0, learnedMs: WIDE, random: () => random });
		const placed = at(0);
		expect(at(0.5)).toBeGreaterThan(placed);
		expect(at(0.999)).toBeGreaterThan(at(0.5));
		expect(at(0.999)).toBeLessThanOrEqual(Math.ceil(placed * 1.02));
		// A key whose jobs all take 60 s: even the most jittered look is after them.
		expect(nextPollDelayMs({ attempt: 0, expectedMs: 60_000, elapsedMs: 0, learnedMs: NARROW, random: () => 0 })).toBeGreaterThanOrEqual(60_000);
	});

	it('still follows reported progress first: the job’s own word beats the key’s history', () => {
		expect(nextPollDelayMs({ attempt: 1, expectedMs: 60_000, elapsedMs: 50_000, progress: 90, learnedMs: WIDE, random: () => 0 })).toBe(5_000);
	});
});

describe('the calibration as a distribution', () => {
	const median = (times: number[]) => times[Math.floor(times.length / 2)];

	it('starts, with nothing learned, from a prior across the API’s 30–90 s scaled to the job’s estimate', () => {
		const times = new RenderCalibration().learnedTimes(56_000);
		expect(times.length).toBeGreaterThan(10);
		expect(times[0]).toBeGreaterThanOrEqual(30_000);
		expect(times[times.length - 1]).toBeLessThanOrEqual(92_000);
		expect(median(times)).toBeGreaterThan(50_000);
		expect(median(times)).toBeLessThan(66_000);
		// A job expected to take twice as long: twice each time.
		expect(new RenderCalibration().learnedTimes(112_000)).toEqual(times.map((ms) => ms * 2));
	});

	it('moves to the key’s own jobs as they are seen end, the prior keeping only a few jobs’ weight', () => {
		const calibration = new RenderCalibration();
		for (let i = 0; i < 20; i++) calibration.record(56_000, 80_000 + i * 200);
		const times = calibration.learnedTimes(56_000);
		expect(median(times)).toBeGreaterThanOrEqual(80_000);
		expect(median(times)).toBeLessThanOrEqual(84_000);
	});

	it('counts the jobs still running: a batch whose short jobs ended first does not take them for the whole', () => {
		// Ten jobs made together: four ended at 35–41 s, six were still running when looked at, 60 s in.
		const calibration = new RenderCalibration();
		for (let i = 0; i < 4; i++) calibration.record(56_000, 35_000 + i * 2_000, `short-${i}`);
		const endedOnly = calibration.learnedTimes(56_000);
		for (let i = 0; i < 6; i++) calibration.seenRunning(`long-${i}`, 56_000, 60_000);
		const withRunning = calibration.learnedTimes(56_000);
		// From the ended jobs alone, most of the distribution sits near 40 s; with the running ones,
		// six in ten jobs take longer than 60 s.
		expect(median(endedOnly)).toBeLessThan(45_000);
		expect(median(withRunning)).toBeGreaterThan(60_000);
		expect(withRunning.filter((ms) => ms > 60_000).length / withRunning.length).toBeGreaterThan(0.5);
	});

	it('forgets a running job once it ends or nothing here will see it end', () => {
		const calibration = new RenderCalibration();
		for (let i = 0; i < 6; i++) calibration.seenRunning(`job-${i}`, 56_000, 80_000);
		const running = median(calibration.learnedTimes(56_000));
		for (let i = 0; i < 3; i++) calibration.forget(`job-${i}`);
		for (let i = 3; i < 6; i++) calibration.record(56_000, 40_000, `job-${i}`);
		expect(running).toBeGreaterThan(75_000);
		expect(median(calibration.learnedTimes(56_000))).toBeLessThan(50_000);
	});
});
