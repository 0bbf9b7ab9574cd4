import { RenderTimes, typicalRenderSeconds } from '../../sandbox/renderTimes';
import { expectedRenderSeconds } from '../../core/pacing/estimate';

describe('sandbox render times', () => {
	it('are drawn across 30–90 s with a spread, the same for the same seed', () => {
		const draw = (seed: number) => {
			const times = new RenderTimes({ seed, spread: 0.25 });
			return Array.from({ length: 200 }, () => times.next('1080P', 8));
		};
		const first = draw(7);
		expect(draw(7)).toEqual(first);
		expect(draw(8)).not.toEqual(first);
		expect(Math.min(...first)).toBeGreaterThanOrEqual(30_000);
		expect(Math.max(...first)).toBeLessThanOrEqual(90_000);
		// A real spread: a fifth of the jobs or more take at least 25 % longer or shorter than core expects.
		const expected = expectedRenderSeconds('1080P', 8) * 1000;
		const far = first.filter((ms) => Math.abs(ms - expected) > expected * 0.25);
		expect(far.length).toBeGreaterThanOrEqual(40);
	});

	it('grow with resolution and duration, and without spread render at the typical time', () => {
		expect(typicalRenderSeconds('720P', 4)).toBeLessThan(typicalRenderSeconds('1080P', 8));
		expect(typicalRenderSeconds('1080P', 8)).toBeLessThan(typicalRenderSeconds('4K', 10));
		expect(new RenderTimes({ seed: 1, spread: 0 }).next('4K', 10)).toBe(typicalRenderSeconds('4K', 10) * 1000);
	});

	it('drawn uniformly are spread evenly across 30–90 s whatever the size', () => {
		const times = new RenderTimes({ seed: 5, spread: 0, shape: 'uniform' });
		const drawn = Array.from({ length: 600 }, () => times.next('720P', 4));
		expect(Math.min(...drawn)).toBeGreaterThanOrEqual(30_000);
		expect(Math.max(...drawn)).toBeLessThanOrEqual(90_000);
		// Each fifth of the range holds about a fifth of the draws (the log-normal shape puts most in the middle).
		for (let fifth = 0; fifth < 5; fifth++) {
			const inside = drawn.filter((ms) => ms >= 30_000 + fifth * 12_000 && ms < 42_000 + fifth * 12_000).length;
			expect(inside).toBeGreaterThan(90);
			expect(inside).toBeLessThan(150);
		}
	});
});
