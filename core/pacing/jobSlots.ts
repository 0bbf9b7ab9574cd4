import type { AbortSignalLike, Clock, Sleep } from '../http/transport';
import { sleepUnlessCancelled, throwIfAborted } from '../http/cancellation';
import { notInTime } from './requestWindows';
import { HeldPlaces, RESERVATION_LAPSE_MS, type JobSlot } from './heldPlaces';
import { OthersPlaces } from './othersPlaces';
import { lookUpOverdue } from './overdueLookups';
import { unawaited, type SharedPlan } from './sharedPlan';

export type { JobSlot } from './heldPlaces';

/** How often a caller waiting for a job slot looks again (no request is spent doing so). */
const SLOT_RECHECK_MS = 1_000;

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

/**
 * How long a place claimed in a shared record stays held without its job: a create is answered
 * well within it, and a process killed meanwhile frees its place for the others by then.
 */
const SHARED_RESERVATION_LAPSE_MS = 120_000;

/** The place of a job that already has one: binding or releasing it changes nothing. */
const PLACE_HELD: JobSlot = { bind: () => undefined, release: () => undefined };

/**
 * The plan's jobs-at-once for one key: creates wait here, in order, for a free place. The places
 * this process holds are HeldPlaces, those others hold OthersPlaces, and a wait on a job nobody
 * here watches looks it up (overdueLookups.ts); this class queues the creates and pauses them.
 */
export class JobSlots {
	private readonly held: HeldPlaces;
	private readonly others: OthersPlaces;
	private blockedUntilMs = 0;
	private queue: Promise<unknown> = Promise.resolve();
	/** Wakes the caller waiting for a place as soon as a job ends, instead of at its next look. */
	private wakeWaiter: (() => void) | undefined;
	/**
	 * Until when a create in flight reaches past the places known to be ours (see
	 * OthersPlaces.probing): its answer, or at the latest the hour its reservation lapses after.
	 */
	private probeUntilMs = 0;
	private shared: { plan: SharedPlan; holderId: string; seq: number } | undefined;

	constructor(
		private limit: number,
		private readonly clock: Clock,
		private readonly sleep: Sleep,
	) {
		this.others = new OthersPlaces(() => this.limit);
		this.held = new HeldPlaces(
			clock,
			() => this.wakeWaiter?.(),
			(count) => this.others.createAccepted(count, clock.now(), this.held.meanRenderMs()),
		);
	}

	setLimit(limit: number): void {
		this.limit = limit;
	}

	/**
	 * Other processes on the key keep the places with us in this record: a create takes a place only
	 * when the record has one free too. `holderId` names this process's places in it.
	 */
	share(plan: SharedPlan, holderId: string): void {
		this.shared = { plan, holderId, seq: 0 };
	}

	get activeCount(): number {
		this.prune(this.clock.now());
		return this.held.size;
	}

	/**
	 * Places a create would get now without waiting: none while a pause lasts, else the plan's
	 * places less this process's jobs (and creates in flight) and the places others are known to hold.
	 */
	freeNow(): number {
		const now = this.clock.now();
		this.prune(now);
		if (this.blockedUntilMs > now) return 0;
		return Math.max(0, this.limit - this.held.size - this.others.count);
	}

	/** When the first place this process holds frees itself if nobody reports its job's end, if any is held. */
	placeFreesAt(): number | undefined {
		return this.held.firstExpiryAt();
	}

	acquire(options: SlotTurnOptions = {}): Promise<JobSlot> {
		const key = options.idempotencyKey;
		if (key !== undefined && this.held.holdsKey(key)) return Promise.resolve(PLACE_HELD);
		const turn = this.queue.then(() => this.waitForPlace(options));
		this.queue = turn.catch(() => undefined);
		return turn;
	}

	/** Something in this process now polls the job and will report its end. */
	watching(jobId: string): void {
		this.held.watching(jobId);
	}

	/**
	 * Nothing here watches the job any more (its poll timed out or was cancelled) though it may
	 * still render: the next create kept waiting by it looks it up once instead of waiting out its hold.
	 */
	notWatching(jobId: string): void {
		this.held.notWatching(jobId);
	}

	/** A job was seen finished (lookup or confirmed callback): its place is free again. */
	jobEnded(jobId: string): void {
		this.held.jobEnded(jobId);
		if (this.shared) unawaited(this.shared.plan.jobEnded(jobId));
	}

	/** No new job starts before then. */
	pause(ms: number): void {
		this.blockedUntilMs = Math.max(this.blockedUntilMs, this.clock.now() + ms);
	}

	/**
	 * The service refused a create for concurrency, the first of the account's jobs ending in
	 * `retryAfterMs` (when `firstEndTold`: the service said so with Retry-After): no create before
	 * then, and the places this process does not hold are the others' (see OthersPlaces.concurrencyRefused).
	 */
	concurrencyRefused(retryAfterMs: number, firstEndTold = true): void {
		this.pause(retryAfterMs);
		const now = this.clock.now();
		// A bare 429 (no Retry-After) does not say when the account's first job ends; the others'
		// jobs are taken to run as ours do, none ending before the first of ours is expected to.
		// Taking the default wait for it, the next creates met the same busy places again.
		const firstEndAtMs = firstEndTold ? now + retryAfterMs : Math.max(now + retryAfterMs, this.held.firstExpectedEndAt() ?? 0);
		// Ours: the jobs made and the creates in flight, but not the refused create (still reserved).
		this.others.concurrencyRefused(this.held.size - 1, firstEndAtMs, this.held.meanRenderMs());
	}

	private async waitForPlace(options: SlotTurnOptions): Promise<JobSlot> {
		const what = 'Waiting for a free job slot';
		for (;;) {
			throwIfAborted(options.signal, what);
			const now = this.clock.now();
			this.prune(now);
			let freeAt = this.freeAt(now);
			if (freeAt <= now) {
				const claimed = this.shared ? await this.claimShared(now) : { ok: true as const };
				if (claimed.ok) return this.sharedSlot(this.reserve(now), claimed.placeId);
				freeAt = claimed.othersFreeAtMs;
			}
			if (options.deadlineAtMs !== undefined && (freeAt > options.deadlineAtMs || now >= options.deadlineAtMs)) {
				throw notInTime(
					Math.max(freeAt - now, SLOT_RECHECK_MS),
					`All ${this.limit} of the plan's jobs at once are still rendering`,
				);
			}
			// Only a job's end brings a full plan's place sooner; a wait for a probe's answer (places
			// free) ends within a request's time anyway, and the lookup would spend one of the hour's.
			if (options.lookUp && this.placesFull() && (await lookUpOverdue(this.held, now, options.lookUp))) continue;
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

	/**
	 * A place in the shared record, or when the places the others hold there are expected to free
	 * (this process's wait goes on as for its own full places; a job ending here wakes it early).
	 */
	private async claimShared(now: number): Promise<{ ok: true; placeId?: string } | { ok: false; othersFreeAtMs: number }> {
		const shared = this.shared as NonNullable<JobSlots['shared']>;
		const placeId = `${shared.holderId}:${shared.seq++}`;
		const claim = await shared.plan.claimPlace(placeId, now, this.limit, now + SHARED_RESERVATION_LAPSE_MS);
		if (claim.granted) return { ok: true, placeId };
		// Nothing said of the others' places (ours fill the record): look again at the recheck pace.
		const firstFree = claim.othersFreeAtMs.length > 0 ? Math.min(...claim.othersFreeAtMs) : now + SLOT_RECHECK_MS;
		return { ok: false, othersFreeAtMs: Math.max(now + 1, firstFree) };
	}

	/** The slot, its binding and release told to the shared record too. */
	private sharedSlot(slot: JobSlot, placeId: string | undefined): JobSlot {
		const shared = this.shared;
		if (!shared || placeId === undefined) return slot;
		return {
			bind: (jobId, expectedDoneAtMs, holdUntilMs, watched, idempotencyKey) => {
				slot.bind(jobId, expectedDoneAtMs, holdUntilMs, watched, idempotencyKey);
				unawaited(shared.plan.bindPlace(placeId, jobId, expectedDoneAtMs, holdUntilMs));
			},
			release: () => {
				slot.release();
				unawaited(shared.plan.releasePlace(placeId));
			},
		};
	}

	/** A place for a create; a probe past our own places is marked until its answer comes. */
	private reserve(now: number): JobSlot {
		const slot = this.held.reserve(now);
		if (!this.others.probing(this.held.size - 1)) return slot;
		this.probeUntilMs = now + RESERVATION_LAPSE_MS;
		const answered = () => {
			this.probeUntilMs = 0;
			this.wakeWaiter?.();
		};
		return {
			bind: (...args) => {
				slot.bind(...args);
				answered();
			},
			release: () => {
				slot.release();
				answered();
			},
		};
	}

	/** Whether every place of the plan is held, here or by others. */
	private placesFull(): boolean {
		return this.held.size + this.others.count >= this.limit;
	}

	/** When a place is expected to be free: now, or when the first running job should end. */
	private freeAt(now: number): number {
		// A probe's answer comes within a request's time: the next one waits for it.
		if (this.probeUntilMs > now && this.others.probing(this.held.size)) return Math.max(now + 1, this.blockedUntilMs);
		const at = Math.max(now, this.blockedUntilMs);
		if (!this.placesFull()) return at;
		let firstEnd = this.others.firstFreeAt();
		for (const place of this.held) firstEnd = Math.min(firstEnd, Math.max(place.expectedDoneAtMs, now + 1));
		return Math.max(at, firstEnd);
	}

	/** When a place frees by itself: a pause ends, a job's hold runs out or another's place frees. */
	private nextLapseAt(now: number): number {
		let at = Math.min(this.blockedUntilMs > now ? this.blockedUntilMs : Infinity, this.others.firstFreeAt());
		for (const place of this.held) at = Math.min(at, place.expiresAtMs);
		return at;
	}

	private prune(now: number): void {
		this.held.prune(now);
		this.others.prune(now);
	}
}
