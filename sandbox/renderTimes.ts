import type { Resolution } from '../core/types';

/**
 * How long the sandbox takes to render a job: drawn, per job, from a seeded distribution over the
 * API's "30 to 90 seconds", longer for bigger and longer outputs, with a spread like a real
 * render farm's. It is deliberately the sandbox's own model, not core's estimate: a client that
 * only works when the service renders in exactly the time it expects would pass every test here
 * and fail in production.
 */
export interface RenderTimeModel {
	/** Seed of the draws: the same seed and the same order of creates give the same render times. */
	seed: number;
	/** Spread of the draws (σ of a log-normal around the typical time); 0 renders at the typical time. */
	spread: number;
	/**
	 * `log-normal` (default): around the typical time of the job's size, by `spread`, clamped to
	 * 30–90 s. `uniform`: evenly across 30–90 s whatever the size (`spread` unused), the widest
	 * the API's "30 to 90 seconds" allows, where a client cannot lean on a typical time.
	 */
	shape?: 'log-normal' | 'uniform';
}

const MIN_SECONDS = 30;
const MAX_SECONDS = 90;
/** How much each resolution adds to the typical render time, as a share of the 30–90 s range. */
const RESOLUTION_SHARE: Record<Resolution, number> = { '720P': 0.08, '1080P': 0.3, '4K': 0.62 };
/** How much the output's length adds, from 4 s (nothing) to 10 s (this share of the range). */
const DURATION_SHARE = 0.38;

/** The typical (median) render time of a job of this size, in seconds. */
export function typicalRenderSeconds(resolution: Resolution, durationSeconds: number): number {
	const durationPart = (Math.min(Math.max(durationSeconds, 4), 10) - 4) / 6;
	const share = RESOLUTION_SHARE[resolution] + DURATION_SHARE * durationPart;
	return MIN_SECONDS + (MAX_SECONDS - MIN_SECONDS) * Math.min(share, 1);
}

/** A stream of render times in milliseconds, one draw per job. */
export class RenderTimes {
	private state: number;

	constructor(private readonly model: RenderTimeModel) {
		this.state = model.seed >>> 0 || 1;
	}

	next(resolution: Resolution, durationSeconds: number): number {
		if (this.model.shape === 'uniform') return Math.round((MIN_SECONDS + (MAX_SECONDS - MIN_SECONDS) * this.uniform()) * 1000);
		const typical = typicalRenderSeconds(resolution, durationSeconds);
		const drawn = typical * Math.exp(this.model.spread * this.normal());
		return Math.round(Math.min(MAX_SECONDS, Math.max(MIN_SECONDS, drawn)) * 1000);
	}

	/** A standard normal draw (Box–Muller) from the seeded generator. */
	private normal(): number {
		const u = Math.max(this.uniform(), 1e-12);
		const v = this.uniform();
		return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
	}

	/** mulberry32: small, fast and good enough for test data. */
	private uniform(): number {
		this.state = (this.state + 0x6d2b79f5) >>> 0;
		let t = this.state;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	}
}
