import type { AbortSignalLike, Clock, Sleep } from './transport';
import type { PlanLimits } from './types';
import { sleepUnlessCancelled, throwIfAborted } from './cancellation';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
/** Added to each window so that latency between us and the service cannot tip a window over. */
const WINDOW_MARGIN_MS = 1_000;
/** How often a caller waiting for a job slot looks again (no request is spent doing so). */
const SLOT_RECHECK_MS = 1_000;
/** A job we cannot observe is counted against concurrency until this long after its estimate. */
const UNOBSERVED_JOB_GRACE = 0.25;

/** A reserved place among the plan's concurrent jobs. */
export interface JobSlot {
	/** The create succeeded: the slot now belongs to this job until it ends or is expected done. */
	bind(jobId: string, expectedDoneAtMs: number): void;
	/** The create failed or the job ended: give the place back. */
	release(): void;
}

interface ActiveJob {
	jobId?: string;
	/** When the slot frees itself if nobody reports the job's end. */
	expiresAtMs: number;
}

/**
 * Keeps one API key inside its plan: requests inside both rate windows, creates inside the
 * concurrency limit. Callers queue in order, so a batch waits its turn instead of collecting 429s.
 * Corrected by what the service says: its rate-limit headers and its 429s.
 */
export class RateLimiter {
	private minuteLog: number[] = [];
	private hourLog: number[] = [];
	private blockedUntilMs = 0;
	private readonly active = new Set<ActiveJob>();
	private requestQueue: Promise<unknown> = Promise.resolve();
	/** Wakes a caller waiting for a job slot as soon as a job ends, instead of at its next look. */
	private wakeSlotWaiter: (() => void) | undefined;
	private slotQueue: Promise<unknown> = Promise.resolve();

	constructor(
		private limits: PlanLimits,
		private readonly clock: Clock,
		private readonly sleep: Sleep,
	) {}

	/** The plan may change on the credential between executions; the history stays. */
	setLimits(limits: PlanLimits): void {
		this.limits = limits;
	}

	get currentLimits(): PlanLimits {
		return this.limits;
	}

	/** Waits until one more request fits both windows, then counts it. */
	acquireRequest(signal?: AbortSignalLike): Promise<void> {
		const turn = this.requestQueue.then(() => this.waitForWindows(signal));
		this.requestQueue = turn.catch(() => undefined);
		return turn;
	}

	/** Waits until one more job fits the concurrency limit, then reserves its place. */
	acquireJobSlot(signal?: AbortSignalLike): Promise<JobSlot> {
		const turn = this.slotQueue.then(() => this.waitForSlot(signal));
		this.slotQueue = turn.catch(() => undefined);
		return turn;
	}

	/** A job was seen finished (lookup or callback): its place is free again. */
	jobEnded(jobId: string): void {
		for (const job of this.active) {
			if (job.jobId === jobId) this.active.delete(job);
		}
		this.wakeSlotWaiter?.();
	}

	/** The service said to wait (429 with Retry-After): nobody on this key sends before then. */
	pause(ms: number): void {
		this.blockedUntilMs = Math.max(this.blockedUntilMs, this.clock.now() + ms);
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
		this.prune(this.clock.now());
		const isHourWindow =
			limit === this.limits.requestsPerHour && limit !== this.limits.requestsPerMinute;
		const log = isHourWindow ? this.hourLog : this.minuteLog;
		const usedByOthers = limit - remaining - log.length;
		const now = this.clock.now();
		for (let i = 0; i < usedByOthers; i++) log.push(now);
	}

	/** Requests counted in the last minute and hour, and jobs holding a slot (for tests and bench). */
	snapshot(): { lastMinute: number; lastHour: number; activeJobs: number } {
		const now = this.clock.now();
		this.prune(now);
		return { lastMinute: this.minuteLog.length, lastHour: this.hourLog.length, activeJobs: this.active.size };
	}

	private async waitForWindows(signal?: AbortSignalLike): Promise<void> {
		for (;;) {
			throwIfAborted(signal, 'Waiting for the plan’s request budget');
			const now = this.clock.now();
			const waitMs = this.delayBeforeNextRequest(now);
			if (waitMs <= 0) {
				this.minuteLog.push(now);
				this.hourLog.push(now);
				return;
			}
			await sleepUnlessCancelled(this.sleep, waitMs, signal, 'Waiting for the plan’s request budget');
		}
	}

	private delayBeforeNextRequest(now: number): number {
		this.prune(now);
		let wait = this.blockedUntilMs - now;
		if (this.minuteLog.length >= this.limits.requestsPerMinute) {
			const oldest = this.minuteLog[this.minuteLog.length - this.limits.requestsPerMinute];
			wait = Math.max(wait, oldest + MINUTE_MS + WINDOW_MARGIN_MS - now);
		}
		if (this.hourLog.length >= this.limits.requestsPerHour) {
			const oldest = this.hourLog[this.hourLog.length - this.limits.requestsPerHour];
			wait = Math.max(wait, oldest + HOUR_MS + WINDOW_MARGIN_MS - now);
		}
		return wait;
	}

	private prune(now: number): void {
		const minuteStart = now - MINUTE_MS - WINDOW_MARGIN_MS;
		const hourStart = now - HOUR_MS - WINDOW_MARGIN_MS;
		while (this.minuteLog.length > 0 && this.minuteLog[0] <= minuteStart) this.minuteLog.shift();
		while (this.hourLog.length > 0 && this.hourLog[0] <= hourStart) this.hourLog.shift();
		for (const job of this.active) {
			if (job.expiresAtMs <= now) this.active.delete(job);
		}
	}

	private async waitForSlot(signal?: AbortSignalLike): Promise<JobSlot> {
		for (;;) {
			throwIfAborted(signal, 'Waiting for a free job slot');
			const now = this.clock.now();
			this.prune(now);
			if (this.active.size < this.limits.concurrentJobs) return this.reserve(now);
			let nextExpiry = Infinity;
			for (const job of this.active) nextExpiry = Math.min(nextExpiry, job.expiresAtMs);
			const waitMs = Math.max(1, Math.min(nextExpiry - now, SLOT_RECHECK_MS));
			const woken = new Promise<void>((resolve) => (this.wakeSlotWaiter = resolve));
			await Promise.race([sleepUnlessCancelled(this.sleep, waitMs, signal, 'Waiting for a free job slot'), woken]);
			this.wakeSlotWaiter = undefined;
		}
	}

	private reserve(now: number): JobSlot {
		// An unbound reservation (create in flight) lapses after an hour at most, so that a
		// crashed caller cannot hold a place for ever.
		const entry: ActiveJob = { expiresAtMs: now + HOUR_MS };
		this.active.add(entry);
		return {
			bind: (jobId, expectedDoneAtMs) => {
				entry.jobId = jobId;
				const expected = Math.max(0, expectedDoneAtMs - this.clock.now());
				entry.expiresAtMs = this.clock.now() + expected * (1 + UNOBSERVED_JOB_GRACE);
			},
			release: () => {
				this.active.delete(entry);
				this.wakeSlotWaiter?.();
			},
		};
	}
}

const sharedLimiters = new Map<string, RateLimiter>();

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
