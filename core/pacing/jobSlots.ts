import type { AbortSignalLike, Clock, Sleep } from '../http/transport';
import { sleepUnlessCancelled, throwIfAborted } from '../http/cancellation';
import { notInTime } from './requestWindows';

const HOUR_MS = 3_600_000;
/** How often a caller waiting for a job slot looks again (no request is spent doing so). */
const SLOT_RECHECK_MS = 1_000;
/** The least time between two lookups of one overdue job that nobody here watches. */
const OVERDUE_LOOK_MIN_MS = 10_000;
/** A job's render time when nothing better is known: the middle of the documented 30–90 s. */
const TYPICAL_JOB_MS = 60_000;
/** The most the others' places are spread out after failed probes (see JobSlots.concurrencyRefused). */
const MAX_CONTENTION = 4;

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

interface ActiveJob {
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

export interface SlotTurnOptions {
	signal?: AbortSignalLike;
	/** Absolute time on the host's clock: fail at once rather than wait past it. */
	deadlineAtMs?: number;
	/**
	 * Looks a job up (core's getJob, which reports an ended job back here). Given, a caller kept
	 * waiting by a job that nobody here watches and that is past its expected end spends one lookup
	 * to learn whether it has ended, rather than waiting out the job's whole hold (up to the
	 * longest render time): Don't Wait jobs of an earlier run would otherwise hold up this one.
	 */
	lookUp?: (jobId: string) => Promise<unknown>;
	/**
	 * The create's idempotency key: when a job made with it still holds a place here, the create
	 * is a replay (a retried run asking for its job again) and takes no second place, nor waits.
	 */
	idempotencyKey?: string;
}

/** The place of a job that already has one: binding or releasing it changes nothing. */
const PLACE_HELD: JobSlot = { bind: () => undefined, release: () => undefined };

/** The plan's jobs-at-once for one key: creates wait here, in order, for a free place. */
export class JobSlots {
	private readonly active = new Set<ActiveJob>();
	/**
	 * When each place others hold on the account should free (learned from a concurrency 429):
	 * other processes on the key, other apps on the account. Only the service sees their jobs.
	 */
	private othersFreeAtMs: number[] = [];
	/** How many places this process knows are its own (since the last concurrency 429). */
	private ownPlaces = Infinity;
	/** How much more slowly the others' places are expected to free, after failed probes. */
	private contention = 1;
	private blockedUntilMs = 0;
	private queue: Promise<unknown> = Promise.resolve();
	/** Wakes the caller waiting for a place as soon as a job ends, instead of at its next look. */
	private wakeWaiter: (() => void) | undefined;

	constructor(
		private limit: number,
		private readonly clock: Clock,
		private readonly sleep: Sleep,
	) {}

	setLimit(limit: number): void {
		this.limit = limit;
	}

	get activeCount(): number {
		this.prune(this.clock.now());
		return this.active.size;
	}

	/**
	 * Places a create would get now without waiting: none while a pause lasts, else the plan's
	 * places less this process's jobs (and creates in flight) and the places others are known to hold.
	 */
	freeNow(): number {
		const now = this.clock.now();
		this.prune(now);
		if (this.blockedUntilMs > now) return 0;
		return Math.max(0, this.limit - this.active.size - this.othersFreeAtMs.length);
	}

	acquire(options: SlotTurnOptions = {}): Promise<JobSlot> {
		const key = options.idempotencyKey;
		if (key !== undefined && [...this.active].some((job) => job.idempotencyKey === key)) return Promise.resolve(PLACE_HELD);
		const turn = this.queue.then(() => this.waitForPlace(options));
		this.queue = turn.catch(() => undefined);
		return turn;
	}

	/** Something in this process now polls the job and will report its end. */
	watching(jobId: string): void {
		for (const job of this.active) {
			if (job.jobId === jobId) job.watched = true;
		}
	}

	/**
	 * Nothing here watches the job any more (its poll timed out or was cancelled) though it may
	 * still render: the next create kept waiting by it looks it up once instead of waiting out its hold.
	 */
	notWatching(jobId: string): void {
		const now = this.clock.now();
		for (const job of this.active) {
			if (job.jobId !== jobId) continue;
			job.watched = false;
			job.expectedDoneAtMs = Math.min(job.expectedDoneAtMs, now);
		}
		this.wakeWaiter?.();
	}

	/** A job was seen finished (lookup or confirmed callback): its place is free again. */
	jobEnded(jobId: string): void {
		for (const job of this.active) {
			if (job.jobId === jobId) this.active.delete(job);
		}
		this.wakeWaiter?.();
	}

	/** No new job starts before then. */
	pause(ms: number): void {
		this.blockedUntilMs = Math.max(this.blockedUntilMs, this.clock.now() + ms);
	}

	/**
	 * The service refused a create for concurrency, the first of the account's jobs ending in
	 * `retryAfterMs`: all of the plan's places are taken, so others hold every one this process
	 * does not. Those free one at a time after then, spaced as jobs of this size end when the plan
	 * runs full (their render time over the places), and more widely after each refused try at
	 * them: a refusal there means the others have work queued too. Without this, each
	 * process believes every free-looking place is its own, and every one of them sends creates
	 * the service refuses (n8n queue mode: 2 workers, 3 executions on one key paid ~1 refused
	 * create a job).
	 */
	concurrencyRefused(retryAfterMs: number): void {
		this.pause(retryAfterMs);
		// Ours: the jobs made and the creates in flight, but not the refused create (still reserved).
		const held = this.active.size - 1;
		// Refused while reaching past the places it knew were its own: the others keep theirs busy
		// (they have work queued too), so their places are expected to free more slowly each time.
		if (held >= this.ownPlaces) this.contention = Math.min(this.contention * 2, MAX_CONTENTION);
		this.ownPlaces = held;
		this.scheduleOthers(this.limit - held, this.clock.now() + retryAfterMs);
	}

	/** A create was accepted: one reaching past this process's own places means others let one go. */
	private createAccepted(): void {
		if (this.active.size <= this.ownPlaces) return;
		this.ownPlaces = this.active.size;
		this.contention = 1;
		this.scheduleOthers(this.othersFreeAtMs.length, this.clock.now());
	}

	/** The places others hold free one at a time from `firstAtMs`, as jobs end when the plan runs full. */
	private scheduleOthers(count: number, firstAtMs: number): void {
		const own = [...this.active].filter((job) => job.jobId !== undefined);
		const renderMs = own.length > 0 ? own.reduce((sum, job) => sum + job.expectedMs, 0) / own.length : TYPICAL_JOB_MS;
		const spacingMs = ((2 * renderMs) / this.limit) * this.contention;
		this.othersFreeAtMs = Array.from({ length: Math.max(0, count) }, (_, index) => firstAtMs + (index + 1) * spacingMs);
	}

	private async waitForPlace(options: SlotTurnOptions): Promise<JobSlot> {
		const what = 'Waiting for a free job slot';
		for (;;) {
			throwIfAborted(options.signal, what);
			const now = this.clock.now();
			this.prune(now);
			const freeAt = this.freeAt(now);
			if (freeAt <= now) return this.reserve(now);
			if (options.deadlineAtMs !== undefined && (freeAt > options.deadlineAtMs || now >= options.deadlineAtMs)) {
				throw notInTime(
					Math.max(freeAt - now, SLOT_RECHECK_MS),
					`All ${this.limit} of the plan's jobs at once are still rendering`,
				);
			}
			const overdue = options.lookUp ? this.overdueUnwatched(now) : undefined;
			if (overdue?.jobId !== undefined) {
				// The next hope for this job: a quarter of its expected time later, at least 10 s.
				overdue.expectedDoneAtMs = now + Math.max(OVERDUE_LOOK_MIN_MS, overdue.expectedMs / 4);
				// A failed lookup (rate window spent, network) only means waiting as before.
				await options.lookUp?.(overdue.jobId).catch(() => undefined);
				continue;
			}
			// A job seen ended wakes this caller; by itself a place frees only when a pause ends or a
			// hold runs out, not at a job's expected end. Look again then, or at the recheck pace:
			// never every millisecond while a job is past its expected end.
			let waitMs = Math.max(1, Math.min(this.nextLapseAt(now) - now, SLOT_RECHECK_MS));
			if (options.deadlineAtMs !== undefined) waitMs = Math.min(waitMs, options.deadlineAtMs - now);
			const woken = new Promise<void>((resolve) => (this.wakeWaiter = resolve));
			await Promise.race([sleepUnlessCancelled(this.sleep, waitMs, options.signal, what), woken]);
			this.wakeWaiter = undefined;
		}
	}

	/** When a place is expected to be free: now, or when the first running job should end. */
	private freeAt(now: number): number {
		let at = Math.max(now, this.blockedUntilMs);
		if (this.active.size + this.othersFreeAtMs.length < this.limit) return at;
		let firstEnd = Infinity;
		for (const job of this.active) firstEnd = Math.min(firstEnd, Math.max(job.expectedDoneAtMs, now + 1));
		for (const freeAtMs of this.othersFreeAtMs) firstEnd = Math.min(firstEnd, freeAtMs);
		at = Math.max(at, firstEnd);
		return at;
	}

	/** When a place frees by itself: a pause ends, a job's hold runs out or another's place frees. */
	private nextLapseAt(now: number): number {
		let at = this.blockedUntilMs > now ? this.blockedUntilMs : Infinity;
		for (const job of this.active) at = Math.min(at, job.expiresAtMs);
		for (const freeAtMs of this.othersFreeAtMs) at = Math.min(at, freeAtMs);
		return at;
	}

	/** The running job nobody here watches that is furthest past its expected end, if any. */
	private overdueUnwatched(now: number): ActiveJob | undefined {
		let found: ActiveJob | undefined;
		for (const job of this.active) {
			if (job.watched || job.jobId === undefined || job.expectedDoneAtMs > now) continue;
			if (!found || job.expectedDoneAtMs < found.expectedDoneAtMs) found = job;
		}
		return found;
	}

	private prune(now: number): void {
		for (const job of this.active) {
			if (job.expiresAtMs <= now) this.active.delete(job);
		}
		this.othersFreeAtMs = this.othersFreeAtMs.filter((freeAtMs) => freeAtMs > now);
	}

	private reserve(now: number): JobSlot {
		// An unbound reservation (create in flight) lapses after an hour at most, so that a
		// crashed caller cannot hold a place for ever.
		const entry: ActiveJob = { expectedDoneAtMs: now + HOUR_MS, expiresAtMs: now + HOUR_MS, watched: true, expectedMs: HOUR_MS };
		this.active.add(entry);
		return {
			bind: (jobId, expectedDoneAtMs, holdUntilMs, watched, idempotencyKey) => {
				if ([...this.active].some((job) => job !== entry && job.jobId === jobId)) {
					this.active.delete(entry);
					this.wakeWaiter?.();
					return;
				}
				entry.jobId = jobId;
				entry.idempotencyKey = idempotencyKey;
				entry.expectedDoneAtMs = expectedDoneAtMs;
				entry.expectedMs = Math.max(0, expectedDoneAtMs - this.clock.now());
				entry.expiresAtMs = holdUntilMs;
				entry.watched = watched;
				this.createAccepted();
			},
			release: () => {
				this.active.delete(entry);
				this.wakeWaiter?.();
			},
		};
	}
}
