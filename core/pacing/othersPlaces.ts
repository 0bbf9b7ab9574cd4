/** A job's render time when nothing better is known: the middle of the documented 30–90 s. */
const TYPICAL_JOB_MS = 60_000;
/** The most the others' places are spread out after failed probes (see concurrencyRefused). */
const MAX_CONTENTION = 4;

/**
 * The places on one key that others hold (other processes on the key, other apps on the
 * account), learned from the service's concurrency 429s: only the service sees their jobs. Each
 * is expected to free at a time of its own (`freeAtMs`).
 */
export class OthersPlaces {
	/** When each place others hold should free. */
	private freeAtMs: number[] = [];
	/**
	 * How many places this process knows are its own: the most it has held at once since the last
	 * concurrency 429, the places held then after one. None at first: until a create is refused or
	 * the plan's places are all its own, a create past them may meet others' jobs (see probing).
	 */
	private ownPlaces = 0;
	/** Whether a create of this process was ever refused for concurrency: others use the key. */
	private refusedOnce = false;
	/** How much more slowly the others' places are expected to free, after failed probes. */
	private contention = 1;

	constructor(private readonly limit: () => number) {}

	get count(): number {
		return this.freeAtMs.length;
	}

	/**
	 * Whether a create made with `held` places held here (creates in flight included) reaches past
	 * the places known to be this process's own: it may meet others' jobs, and is a probe. Probes
	 * go one at a time (JobSlots), so that processes starting together on one key, each unaware of
	 * the others, collide once each rather than once for every place they all reach for at once.
	 */
	probing(held: number): boolean {
		return held >= this.ownPlaces && this.ownPlaces < this.limit();
	}

	/** When the first of them frees, Infinity with none. */
	firstFreeAt(): number {
		return Math.min(Infinity, ...this.freeAtMs);
	}

	prune(now: number): void {
		this.freeAtMs = this.freeAtMs.filter((at) => at > now);
	}

	/**
	 * The service refused a create for concurrency, the first of the account's jobs ending at
	 * `firstEndAtMs`, while this process held `held` places (not counting the refused create):
	 * all of the plan's places are taken, so others hold every one this process does not. Those
	 * free one at a time after then, spaced as jobs of this size end when the plan runs full (their
	 * render time over the places), and more widely after each refused try at them: a refusal there
	 * means the others have work queued too. Without this, each process believes every
	 * free-looking place is its own, and every one of them sends creates the service refuses (n8n
	 * queue mode: 2 workers, 3 executions on one key paid ~1 refused create a job).
	 */
	concurrencyRefused(held: number, firstEndAtMs: number, renderMs: number | undefined): void {
		// Refused while reaching past the places it knew were its own: the others keep theirs busy
		// (they have work queued too), so their places are expected to free more slowly each time.
		if (this.refusedOnce && held >= this.ownPlaces) this.contention = Math.min(this.contention * 2, MAX_CONTENTION);
		this.refusedOnce = true;
		this.ownPlaces = held;
		this.schedule(this.limit() - held, firstEndAtMs, renderMs);
	}

	/** A create was accepted with `held` places held here: one past this process's own places means others let one go. */
	createAccepted(held: number, now: number, renderMs: number | undefined): void {
		if (held <= this.ownPlaces) return;
		this.ownPlaces = held;
		this.contention = 1;
		this.schedule(this.freeAtMs.length, now, renderMs);
	}

	/** `count` places free one at a time from `firstAtMs`, as jobs end when the plan runs full. */
	private schedule(count: number, firstAtMs: number, renderMs = TYPICAL_JOB_MS): void {
		const spacingMs = ((2 * renderMs) / this.limit()) * this.contention;
		this.freeAtMs = Array.from({ length: Math.max(0, count) }, (_, index) => firstAtMs + (index + 1) * spacingMs);
	}
}
