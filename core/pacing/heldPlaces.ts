import type { Clock } from '../http/transport';

/** An unbound reservation (a create in flight) lapses after this, so a crashed caller cannot hold a place for ever. */
export const RESERVATION_LAPSE_MS = 3_600_000;

/** A reserved place among the plan's concurrent jobs. */
export interface JobSlot {
	/**
	 * The create succeeded: the place belongs to this job until it is seen ended, or at the latest
	 * until `holdUntilMs` (see slotHoldMs); `expectedDoneAtMs` tells waiting callers when to hope.
	 * A job that already holds a place here (an idempotent replay of its create) keeps that one, and
	 * this reservation is given back.
	 */
	bind(jobId: string, expectedDoneAtMs: number, holdUntilMs: number, watched: boolean, idempotencyKey?: string): void;
	/** The create failed or the job ended: give the place back. */
	release(): void;
}

/** One place this process holds: a create in flight, or the job it made. */
export interface HeldPlace {
	jobId?: string;
	/** The key the job was created with: a replay of that create needs no second place. */
	idempotencyKey?: string;
	expectedDoneAtMs: number;
	/** When the place frees itself if nobody reports the job's end. */
	expiresAtMs: number;
	/** Something in this process will see the job end (polling, a callback it receives). */
	watched: boolean;
	/** Expected render time, for spacing the lookups of an overdue job. */
	expectedMs: number;
}

/**
 * The places among the plan's jobs at once that this process holds for one key: reserved for a
 * create in flight, bound to the job it made, given back when the job is seen ended or its hold
 * runs out. `changed` is told whenever a place is given back (a caller waiting for one wakes).
 */
export class HeldPlaces {
	private readonly places = new Set<HeldPlace>();

	constructor(
		private readonly clock: Clock,
		private readonly changed: () => void,
		/** A create was accepted (see OthersPlaces.createAccepted). */
		private readonly accepted: (held: number) => void,
	) {}

	get size(): number {
		return this.places.size;
	}

	[Symbol.iterator](): IterableIterator<HeldPlace> {
		return this.places.values();
	}

	/** Whether a job made with this idempotency key holds a place here. */
	holdsKey(idempotencyKey: string): boolean {
		return [...this.places].some((place) => place.idempotencyKey === idempotencyKey);
	}

	/** The mean expected render time of the jobs held, if any. */
	meanRenderMs(): number | undefined {
		const jobs = [...this.places].filter((place) => place.jobId !== undefined);
		return jobs.length > 0 ? jobs.reduce((sum, place) => sum + place.expectedMs, 0) / jobs.length : undefined;
	}

	/** When the first job held is expected to end, if any is held. */
	firstExpectedEndAt(): number | undefined {
		return this.earliestOfJobs('expectedDoneAtMs');
	}

	/** When the first job held frees its place by itself (its hold runs out), if any is held. */
	firstExpiryAt(): number | undefined {
		return this.earliestOfJobs('expiresAtMs');
	}

	/** The earliest of one moment over the jobs held (not the creates in flight), if any is held. */
	private earliestOfJobs(moment: 'expectedDoneAtMs' | 'expiresAtMs'): number | undefined {
		const times = [...this.places].filter((place) => place.jobId !== undefined).map((place) => place[moment]);
		return times.length > 0 ? Math.min(...times) : undefined;
	}

	watching(jobId: string): void {
		for (const place of this.places) if (place.jobId === jobId) place.watched = true;
	}

	/** Nothing here watches the job any more: from now on it counts as overdue. */
	notWatching(jobId: string): void {
		const now = this.clock.now();
		for (const place of this.places) {
			if (place.jobId !== jobId) continue;
			place.watched = false;
			place.expectedDoneAtMs = Math.min(place.expectedDoneAtMs, now);
		}
		this.changed();
	}

	jobEnded(jobId: string): void {
		for (const place of this.places) if (place.jobId === jobId) this.places.delete(place);
		this.changed();
	}

	/** Places whose hold ran out are given back. */
	prune(now: number): void {
		for (const place of this.places) if (place.expiresAtMs <= now) this.places.delete(place);
	}

	reserve(now: number): JobSlot {
		// An unbound reservation (create in flight) lapses after an hour at most, so that a
		// crashed caller cannot hold a place for ever.
		const entry: HeldPlace = { expectedDoneAtMs: now + RESERVATION_LAPSE_MS, expiresAtMs: now + RESERVATION_LAPSE_MS, watched: true, expectedMs: RESERVATION_LAPSE_MS };
		this.places.add(entry);
		return {
			bind: (jobId, expectedDoneAtMs, holdUntilMs, watched, idempotencyKey) => {
				if ([...this.places].some((place) => place !== entry && place.jobId === jobId)) {
					this.places.delete(entry);
					this.changed();
					return;
				}
				entry.jobId = jobId;
				entry.idempotencyKey = idempotencyKey;
				entry.expectedDoneAtMs = expectedDoneAtMs;
				entry.expectedMs = Math.max(0, expectedDoneAtMs - this.clock.now());
				entry.expiresAtMs = holdUntilMs;
				entry.watched = watched;
				this.accepted(this.places.size);
			},
			release: () => {
				this.places.delete(entry);
				this.changed();
			},
		};
	}
}
