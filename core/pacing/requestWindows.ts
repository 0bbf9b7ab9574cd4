import type { AbortSignalLike, Clock, Sleep } from '../http/transport';
import type { PlanLimits } from '../types';
import { cancelledError } from '../http/cancellation';
import { RateLimitError } from '../errors/errors';
import { countsAtLeast, mergedLog, withoutEach } from './requestLog';
import type { SharedPlan } from './sharedPlan';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
/** Added to each window so that latency between us and the service cannot tip a window over. */
const WINDOW_MARGIN_MS = 1_000;
/**
 * The longest single nap of the queue. A new arrival wakes the queue at once, but the nap's timer
 * runs on; short naps keep such leftover timers from holding a host process open for long.
 */
const MAX_NAP_MS = 1_000;
/** How long a turn refused by the shared record waits before it asks again, at the least. */
const SHARED_REFUSAL_NAP_MS = 100;
/** The most of each window that bulk work leaves for urgent requests (confirming a callback). */
const URGENT_RESERVE_SHARE = 0.1;

/**
 * Urgent requests (confirming a callback, which the service waits on for at most 15 s) go ahead of
 * every bulk request and may use a reserve of each window that bulk work never touches, so a batch
 * of lookups or creates can never starve them. The reserve follows the demand: one more than the
 * urgent requests of the last window, at most a tenth of it. A process that confirms no callbacks
 * (n8n's Wait for Callback verifies signed ones and confirms the others in its next step, as bulk)
 * keeps one request back, not a tenth: a Premium batch of 500 creates fits one hour's 500.
 * That one request of the hour also keeps n8n's workers, which learn each other's requests only at
 * a step's start, from racing for the hour's last request, and then being refused 429 and stalled
 * (docs/benchmarks.md#measured-rules-in-the-code).
 */
export type RequestPriority = 'urgent' | 'bulk';

export interface RequestTurnOptions {
	signal?: AbortSignalLike;
	/** Absolute time on the host's clock: fail at once rather than wait past it. */
	deadlineAtMs?: number;
	priority?: RequestPriority;
}

interface Waiter {
	priority: RequestPriority;
	seq: number;
	deadlineAtMs?: number;
	signal?: AbortSignalLike;
	grant(): void;
	fail(error: Error): void;
}

/**
 * Both rate windows of one key, and the queue of requests waiting for room in them: urgent before
 * bulk, first come first served within each. Corrected by what the service says (headers, 429s).
 */
export class RequestWindows {
	private minuteLog: number[] = [];
	private hourLog: number[] = [];
	/** The urgent requests among them (their reserve follows these). */
	private urgentMinuteLog: number[] = [];
	private urgentHourLog: number[] = [];
	/** The entries of hourLog that stand for others' requests the headers told of (see countOthers). */
	private othersHourLog: number[] = [];
	private blockedUntilMs = 0;
	private waiters: Waiter[] = [];
	private seq = 0;
	private draining = false;
	private wake: (() => void) | undefined;

	constructor(
		private limits: PlanLimits,
		private readonly clock: Clock,
		private readonly sleep: Sleep,
	) {}

	private shared: SharedPlan | undefined;

	setLimits(limits: PlanLimits): void {
		this.limits = limits;
	}

	/**
	 * Other processes on the key keep the windows with us in this record: a turn is taken only when
	 * the record has room for it too (an atomic claim), and each claim teaches us their requests.
	 */
	share(plan: SharedPlan): void {
		this.shared = plan;
	}

	/** Waits for this request's turn and for room in both windows, then counts it. */
	acquire(options: RequestTurnOptions = {}): Promise<void> {
		if (options.signal?.aborted) return Promise.reject(cancelledError('Waiting for the plan’s request budget'));
		return new Promise<void>((resolve, reject) => {
			const onAbort = () => {
				if (this.remove(waiter)) reject(cancelledError('Waiting for the plan’s request budget'));
			};
			const waiter: Waiter = {
				priority: options.priority ?? 'bulk',
				seq: this.seq++,
				deadlineAtMs: options.deadlineAtMs,
				signal: options.signal,
				grant: () => {
					options.signal?.removeEventListener('abort', onAbort);
					resolve();
				},
				fail: (error) => {
					options.signal?.removeEventListener('abort', onAbort);
					reject(error);
				},
			};
			options.signal?.addEventListener('abort', onAbort);
			this.enqueue(waiter);
			// Known at once to be impossible in time: say so now, nothing is sent.
			if (waiter.deadlineAtMs !== undefined) {
				const now = this.clock.now();
				const startAt = this.startTimeOf(this.waiters.indexOf(waiter), waiter.priority, now);
				if (startAt > waiter.deadlineAtMs && this.remove(waiter)) waiter.fail(notInTime(startAt - now));
			}
			this.drain();
		});
	}

	/** The service said to wait (429 with Retry-After): nobody on this key sends before then. */
	pause(ms: number): void {
		this.blockedUntilMs = Math.max(this.blockedUntilMs, this.clock.now() + ms);
	}

	/** Someone else used `count` requests of a window just now (another process on the key). */
	countOthers(window: 'minute' | 'hour', count: number): void {
		const now = this.clock.now();
		this.prune(now);
		const log = window === 'hour' ? this.hourLog : this.minuteLog;
		for (let i = 0; i < count; i++) log.push(now);
		if (window === 'hour') for (let i = 0; i < count; i++) this.othersHourLog.push(now);
	}

	/**
	 * Requests on the key known from a record other processes share, at the times it gives (they
	 * may include ours): from any moment on, each window counts at least as many as the record does.
	 * Without it, a process in n8n's queue mode sees only its own share of a batch's requests, and
	 * on a service without rate-limit headers learns of the others only by its 429s.
	 */
	learnSent(times: readonly number[]): void {
		const now = this.clock.now();
		this.prune(now);
		const within = (windowMs: number) => times.filter((at) => at > now - windowMs - WINDOW_MARGIN_MS && at <= now);
		this.minuteLog = countsAtLeast(this.minuteLog, within(MINUTE_MS));
		// Others' requests counted as if sent when the headers told of them stay in the hour for an
		// hour from then. Those the record now shows count at its (earlier) times instead, or they
		// hold this process's next hour back (docs/benchmarks.md#measured-rules-in-the-code).
		const counted = this.hourLog.length;
		const known = countsAtLeast(withoutEach(this.hourLog, this.othersHourLog), within(HOUR_MS));
		this.othersHourLog = this.othersHourLog.slice(this.othersHourLog.length - Math.max(0, counted - known.length));
		this.hourLog = mergedLog(known, this.othersHourLog);
	}

	/**
	 * How many more requests of this priority could start by `atMs`, behind everyone queued (at
	 * most `max`): a caller that must not wait long (a parked n8n step) sends that many and no more.
	 */
	roomBy(atMs: number, priority: RequestPriority = 'bulk', max = 100): number {
		const now = this.clock.now();
		let count = 0;
		while (count < max && this.startTimeOf(this.waiters.length + count, priority, now) <= atMs) count++;
		return count;
	}

	/**
	 * How many more bulk requests the hour window takes by `atMs`, queued ones included: its room
	 * now plus what leaves it by then. Over a span of minutes the minute window is never the bound.
	 * Requests known from a record other processes share count once learned (see learnSent).
	 */
	hourRoomBy(atMs: number): number {
		const now = this.clock.now();
		this.prune(now);
		const perHour = capacity(this.limits.requestsPerHour, 'bulk', this.urgentHourLog.length);
		const inWindow = (at: number) => at > atMs - HOUR_MS - WINDOW_MARGIN_MS;
		const stillIn = this.hourLog.filter(inWindow).length;
		return Math.max(0, perHour - stillIn - this.waiters.length);
	}

	/** When one more request of this priority could start, behind everyone queued. */
	nextStartAt(priority: RequestPriority = 'bulk'): number {
		return this.startTimeOf(this.waiters.length, priority, this.clock.now());
	}

	/** Requests we counted in the last minute and hour. */
	counts(): { lastMinute: number; lastHour: number } {
		this.prune(this.clock.now());
		return { lastMinute: this.minuteLog.length, lastHour: this.hourLog.length };
	}

	private enqueue(waiter: Waiter): void {
		let at = this.waiters.length;
		while (at > 0 && rank(this.waiters[at - 1].priority) > rank(waiter.priority)) at--;
		this.waiters.splice(at, 0, waiter);
	}

	private remove(waiter: Waiter): boolean {
		const at = this.waiters.indexOf(waiter);
		if (at < 0) return false;
		this.waiters.splice(at, 1);
		this.wake?.();
		return true;
	}

	/** One loop hands out turns while anyone waits; an arrival or a departure wakes it early. */
	private drain(): void {
		if (this.draining) {
			this.wake?.();
			return;
		}
		this.draining = true;
		void this.drainLoop();
	}

	private async drainLoop(): Promise<void> {
		for (;;) {
			const now = this.clock.now();
			this.failOverdue(now);
			const head = this.waiters[0];
			if (!head) {
				this.draining = false;
				return;
			}
			const waitMs = this.startTimeOf(0, head.priority, now) - now;
			if (waitMs <= 0 && this.shared) {
				await this.takeSharedTurn(head, now);
				continue;
			}
			if (waitMs <= 0) {
				this.waiters.shift();
				this.minuteLog.push(now);
				this.hourLog.push(now);
				if (head.priority === 'urgent') {
					this.urgentMinuteLog.push(now);
					this.urgentHourLog.push(now);
				}
				head.grant();
				continue;
			}
			let napMs = Math.min(waitMs, MAX_NAP_MS);
			for (const waiter of this.waiters) {
				if (waiter.deadlineAtMs !== undefined) napMs = Math.min(napMs, Math.max(1, waiter.deadlineAtMs - now));
			}
			const woken = new Promise<void>((resolve) => (this.wake = resolve));
			// The nap is the host's sleep; a failing sleep only ends the nap early.
			await Promise.race([this.sleep(napMs).catch(() => undefined), woken]);
			this.wake = undefined;
		}
	}

	/**
	 * Asks the shared record for the head's turn. Refused (other processes took the room), the
	 * record's requests are learned, so the next turn is timed by them, after a short nap. A record
	 * that cannot be reached fails the head's request: nothing is sent without the record's consent.
	 * A head that left meanwhile (cancelled) hands its claimed turn to the next in the queue.
	 */
	private async takeSharedTurn(head: Waiter, now: number): Promise<void> {
		const room = {
			perMinute: capacity(this.limits.requestsPerMinute, head.priority, this.urgentMinuteLog.length),
			perHour: capacity(this.limits.requestsPerHour, head.priority, this.urgentHourLog.length),
			marginMs: WINDOW_MARGIN_MS,
		};
		let claim: { granted: boolean; sentAtMs: number[] };
		try {
			claim = await (this.shared as SharedPlan).claimRequest(now, room);
		} catch (error) {
			if (this.remove(head)) head.fail(error instanceof Error ? error : new Error(String(error)));
			return;
		}
		if (!claim.granted) {
			this.learnSent(claim.sentAtMs);
			await this.sleep(SHARED_REFUSAL_NAP_MS).catch(() => undefined);
			return;
		}
		// Granted, the turn is counted here as usual; the record's times then add the others'.
		const taker = this.waiters.shift();
		this.minuteLog.push(now);
		this.hourLog.push(now);
		if (taker?.priority === 'urgent') {
			this.urgentMinuteLog.push(now);
			this.urgentHourLog.push(now);
		}
		this.learnSent(claim.sentAtMs);
		taker?.grant();
	}

	/** Waiters whose deadline has come go away with the delay they would still have needed. */
	private failOverdue(now: number): void {
		for (const waiter of [...this.waiters]) {
			if (waiter.deadlineAtMs === undefined || waiter.deadlineAtMs > now) continue;
			const startAt = this.startTimeOf(this.waiters.indexOf(waiter), waiter.priority, now);
			if (startAt <= now) continue;
			this.waiters.splice(this.waiters.indexOf(waiter), 1);
			waiter.fail(notInTime(startAt - now));
		}
	}

	/**
	 * When the request at `position` in the queue could start, if everyone ahead of it goes as
	 * soon as the windows allow: a small simulation of both windows.
	 */
	private startTimeOf(position: number, priority: RequestPriority, now: number): number {
		this.prune(now);
		const minute = [...this.minuteLog];
		const hour = [...this.hourLog];
		const perMinute = capacity(this.limits.requestsPerMinute, priority, this.urgentMinuteLog.length);
		const perHour = capacity(this.limits.requestsPerHour, priority, this.urgentHourLog.length);
		let at = Math.max(now, this.blockedUntilMs);
		for (let i = 0; i <= position; i++) {
			if (minute.length >= perMinute) at = Math.max(at, minute[minute.length - perMinute] + MINUTE_MS + WINDOW_MARGIN_MS);
			if (hour.length >= perHour) at = Math.max(at, hour[hour.length - perHour] + HOUR_MS + WINDOW_MARGIN_MS);
			minute.push(at);
			hour.push(at);
		}
		return at;
	}

	private prune(now: number): void {
		const minuteStart = now - MINUTE_MS - WINDOW_MARGIN_MS;
		const hourStart = now - HOUR_MS - WINDOW_MARGIN_MS;
		for (const log of [this.minuteLog, this.urgentMinuteLog]) while (log.length > 0 && log[0] <= minuteStart) log.shift();
		for (const log of [this.hourLog, this.urgentHourLog, this.othersHourLog]) while (log.length > 0 && log[0] <= hourStart) log.shift();
	}
}

function rank(priority: RequestPriority): number {
	return priority === 'urgent' ? 0 : 1;
}

/**
 * How many requests of a window this priority may use: bulk leaves the urgent reserve alone, one
 * more than the window's recent urgent requests, at most a tenth of it.
 */
function capacity(limit: number, priority: RequestPriority, urgentRecent: number): number {
	if (priority === 'urgent' || limit <= 1) return Math.max(1, limit);
	const reserve = Math.min(Math.max(1, Math.floor(limit * URGENT_RESERVE_SHARE)), urgentRecent + 1);
	return Math.max(1, limit - reserve);
}

/** The request cannot start before its deadline: nothing was sent, the caller may try again later. */
export function notInTime(
	delayMs: number,
	why = "The plan's request limits leave no room for this request in the time available",
): RateLimitError {
	const seconds = Math.max(1, Math.ceil(delayMs / 1000));
	return new RateLimitError(
		`${why}; nothing was sent. Try again in ${seconds} s.`,
		{ code: 'rate_limited_locally', retryAfterMs: seconds * 1000, hint: `Try again in ${seconds} s` },
	);
}
