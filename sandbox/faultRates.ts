/**
 * Faults drawn at random, for soak tests that need a service which now and then drops a callback
 * or answers 503, rather than the scenarios' faults on demand.
 */
export interface FaultRateConfig {
	/** Share (0..1) of jobs' callback deliveries lost: no attempt is sent. */
	lostCallbacks?: number;
	/** Share (0..1) of API requests answered 503 `unavailable`. */
	unavailable?: number;
	/** Seed of the draws (default 1). */
	seed?: number;
}

export type FaultKind = 'lostCallbacks' | 'unavailable';

const KINDS: readonly FaultKind[] = ['lostCallbacks', 'unavailable'];

const shown = (value: unknown): string => (typeof value === 'number' ? String(value) : JSON.stringify(value));

/** Why `value` is not a fault rate setting (an object of known fields, rates 0..1, a finite seed), or undefined when it is. */
export function faultRatesProblem(value: unknown): string | undefined {
	if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'Fault rates are an object: { lostCallbacks?, unavailable?, seed? }.';
	for (const [name, field] of Object.entries(value)) {
		if (field === undefined) continue;
		if (name === 'seed') {
			if (typeof field !== 'number' || !Number.isFinite(field)) return `seed must be a finite number, not ${shown(field)}.`;
		} else if (!(KINDS as readonly string[]).includes(name)) {
			return `Unknown fault rate ${name}: the rates are lostCallbacks and unavailable, with a seed.`;
		} else if (!isFraction(field)) {
			return `${name} must be a fraction from 0 to 1 (0.05 is 5 %), not ${shown(field)}.`;
		}
	}
	return undefined;
}

export function isFraction(value: unknown): value is number {
	return typeof value === 'number' && value >= 0 && value <= 1;
}

/** mulberry32: small, fast and good enough for test data. */
function mulberry32(seed: number): () => number {
	let state = seed >>> 0;
	return () => {
		state = (state + 0x6d2b79f5) >>> 0;
		let t = state;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

/** One stream per kind, offset so that the kinds do not draw the same sequence. */
function streams(seed: number): Record<FaultKind, () => number> {
	return { lostCallbacks: mulberry32(seed), unavailable: mulberry32(seed + 0x9e3779b9) };
}

/**
 * The rates in force and one seeded stream of draws per kind, so that the same seed and the same
 * sequence of requests give the same 503s however callbacks interleave with them, and the reverse.
 * Every event draws, whatever its rate: changing a rate keeps later draws where they were.
 */
export class FaultRates {
	private rates: Record<FaultKind, number> = { lostCallbacks: 0, unavailable: 0 };
	private seed = 1;
	private draws = streams(1);

	/** Throws on a setting faultRatesProblem refuses. */
	constructor(private readonly initial: FaultRateConfig = {}) {
		this.set(initial);
	}

	/** Back to the rates and seed at start, the draws from their beginning. */
	reset(): void {
		this.rates = { lostCallbacks: 0, unavailable: 0 };
		this.set({ ...this.initial, seed: this.initial.seed ?? 1 });
	}

	/** Whether this one event of `kind` fails. */
	fails(kind: FaultKind): boolean {
		return this.draws[kind]() < this.rates[kind];
	}

	/** Changes the rates given; a seed given restarts the draws from it. */
	set(change: FaultRateConfig): void {
		const problem = faultRatesProblem(change);
		if (problem) throw new Error(problem);
		for (const kind of KINDS) this.rates[kind] = change[kind] ?? this.rates[kind];
		if (change.seed !== undefined) {
			this.seed = change.seed;
			this.draws = streams(change.seed);
		}
	}

	get current(): Required<FaultRateConfig> {
		return { ...this.rates, seed: this.seed };
	}
}
