import type { AbortSignalLike, Clock, Sleep } from '../http/transport';
import type { PlanLimits } from '../types';
import { RequestWindows, type RequestPriority } from './requestWindows';
import { JobSlots, type JobSlot, type SlotTurnOptions } from './jobSlots';
import type { SharedPlan } from './sharedPlan';
import { keyRegistry } from './perKey';

export type { JobSlot } from './jobSlots';
export type { RequestPriority } from './requestWindows';

export interface TurnOptions {
	signal?: AbortSignalLike;
	/** Absolute time on the host's clock: fail at once with a RateLimitError rather than wait past it. */
	deadlineAtMs?: number;
}

/**
 * Keeps one API key inside its plan: requests inside both rate windows (urgent ones first), creates
 * inside the concurrency limit. Callers queue, so a batch waits its turn instead of collecting 429s,
 * and a caller with a deadline is told at once when its turn would come too late.
 * Corrected by what the service says: its rate-limit headers and its 429s.
 */
export class RateLimiter {
	private readonly windows: RequestWindows;
	private readonly slots: JobSlots;

	constructor(
		private limits: PlanLimits,
		clock: Clock,
		sleep: Sleep,
	) {
		this.windows = new RequestWindows(limits, clock, sleep);
		this.slots = new JobSlots(limits.concurrentJobs, clock, sleep);
	}

	/** The plan may change on the credential between executions; the history stays. */
	setLimits(limits: PlanLimits): void {
		this.limits = limits;
		this.windows.setLimits(limits);
		this.slots.setLimit(limits.concurrentJobs);
	}

	/**
	 * Every process on the key paces through this record (see SharedPlan): its request windows and
	 * its places, claimed atomically there before they are taken here. `holderId` names this process.
	 */
	share(plan: SharedPlan, holderId: string): void {
		this.windows.share(plan);
		this.slots.share(plan, holderId);
	}

	get currentLimits(): PlanLimits {
		return this.limits;
	}

	/** Waits until one more request fits both windows, then counts it. */
	acquireRequest(options: TurnOptions & { priority?: RequestPriority } = {}): Promise<void> {
		return this.windows.acquire(options);
	}

	/** How many more bulk requests could start by `atMs` without waiting past it (see RequestWindows.roomBy). */
	requestRoomBy(atMs: number): number {
		return this.windows.roomBy(atMs);
	}

	/** How many more bulk requests the hour window takes by `atMs` (see RequestWindows.hourRoomBy). */
	hourRoomBy(atMs: number): number {
		return this.windows.hourRoomBy(atMs);
	}

	/** Requests on the key that a shared record shows, at their times (see RequestWindows.learnSent). */
	learnSent(times: readonly number[]): void {
		this.windows.learnSent(times);
	}

	/** When one more bulk request could start. */
	nextRequestAt(): number {
		return this.windows.nextStartAt();
	}

	/** Waits until one more job fits the concurrency limit, then reserves its place. */
	acquireJobSlot(options: SlotTurnOptions = {}): Promise<JobSlot> {
		return this.slots.acquire(options);
	}

	/** Places a create would get now without waiting (see JobSlots.freeNow). */
	freeJobSlots(): number {
		return this.slots.freeNow();
	}

	/** When the first place this process holds frees itself (see JobSlots.placeFreesAt). */
	placeFreesAt(): number | undefined {
		return this.slots.placeFreesAt();
	}

	/** Something in this process now polls the job and will report its end. */
	watchingJob(jobId: string): void {
		this.slots.watching(jobId);
	}

	/** Nothing in this process watches the job any more (see JobSlots.notWatching). */
	notWatchingJob(jobId: string): void {
		this.slots.notWatching(jobId);
	}

	/** A job was seen finished (lookup or confirmed callback): its place is free again. */
	jobEnded(jobId: string): void {
		this.slots.jobEnded(jobId);
	}

	/** The service said to wait (429 with Retry-After): nobody on this key sends before then. */
	pause(ms: number): void {
		this.windows.pause(ms);
	}

	/** The service refused a create for concurrency: only new jobs wait, lookups go on (see JobSlots.concurrencyRefused). */
	concurrencyRefused(retryAfterMs: number, firstEndTold = true): void {
		this.slots.concurrencyRefused(retryAfterMs, firstEndTold);
	}

	/**
	 * Reads X-RateLimit-Limit / -Remaining. When the service has counted more requests in the
	 * window than we sent, someone else uses the key (another workflow, another process): we count
	 * their requests too, as if sent now, so that we slow down before the service refuses us.
	 */
	observeHeaders(headers: Record<string, string>): void {
		const limit = Number(headers['x-ratelimit-limit']);
		const remaining = Number(headers['x-ratelimit-remaining']);
		if (headers['x-ratelimit-remaining'] === undefined || !Number.isFinite(limit) || !Number.isFinite(remaining)) {
			return;
		}
		const isHourWindow =
			limit === this.limits.requestsPerHour && limit !== this.limits.requestsPerMinute;
		const counted = this.windows.counts();
		const usedByOthers = limit - remaining - (isHourWindow ? counted.lastHour : counted.lastMinute);
		if (usedByOthers > 0) this.windows.countOthers(isHourWindow ? 'hour' : 'minute', usedByOthers);
	}

	/** Requests counted in the last minute and hour, and jobs holding a slot (for tests and bench). */
	snapshot(): { lastMinute: number; lastHour: number; activeJobs: number } {
		return { ...this.windows.counts(), activeJobs: this.slots.activeCount };
	}
}

const sharedLimiters = keyRegistry(new Map<string, RateLimiter>());

/**
 * The limiter for one key in this process: every node, item and execution using the key shares
 * it, since the service counts them all together.
 */
export function sharedLimiter(
	limiterKey: string,
	limits: PlanLimits,
	clock: Clock,
	sleep: Sleep,
): RateLimiter {
	let limiter = sharedLimiters.get(limiterKey);
	if (!limiter) {
		limiter = new RateLimiter(limits, clock, sleep);
		sharedLimiters.set(limiterKey, limiter);
	} else {
		limiter.setLimits(limits);
	}
	return limiter;
}
