import type { PlanLimits } from '../core/types';

const MINUTE = 60_000;
const HOUR = 3_600_000;

export interface WindowState {
	limit: number;
	remaining: number;
	/** Virtual ms when the window frees its next request. */
	resetAt: number;
}

/**
 * Sliding request windows per key, in virtual time: every authenticated request counts against
 * the key's per-minute and per-hour limits (docs/api.md#rate-windows).
 */
export class RateWindows {
	private readonly log = new Map<string, number[]>();

	/** Counts the request if it fits; otherwise says when it would. */
	take(keyId: string, limits: PlanLimits, now: number): { allowed: boolean; retryAtMs: number; window: WindowState } {
		const times = this.prune(keyId, now);
		const minute = this.window(times, limits.requestsPerMinute, MINUTE, now);
		const hour = this.window(times, limits.requestsPerHour, HOUR, now);
		if (minute.remaining > 0 && hour.remaining > 0) {
			times.push(now);
			const after = { minute: { ...minute, remaining: minute.remaining - 1 }, hour: { ...hour, remaining: hour.remaining - 1 } };
			return { allowed: true, retryAtMs: now, window: this.mostConstraining(after.minute, after.hour) };
		}
		const blocking = [minute, hour].filter((w) => w.remaining === 0);
		const retryAtMs = Math.max(...blocking.map((w) => w.resetAt));
		return { allowed: false, retryAtMs, window: this.mostConstraining(minute, hour) };
	}

	/** The current state without counting anything (for headers on refusals before counting). */
	peek(keyId: string, limits: PlanLimits, now: number): WindowState {
		const times = this.prune(keyId, now);
		return this.mostConstraining(
			this.window(times, limits.requestsPerMinute, MINUTE, now),
			this.window(times, limits.requestsPerHour, HOUR, now),
		);
	}

	reset(): void {
		this.log.clear();
	}

	private prune(keyId: string, now: number): number[] {
		const times = (this.log.get(keyId) ?? []).filter((t) => t > now - HOUR);
		this.log.set(keyId, times);
		return times;
	}

	private window(times: number[], limit: number, length: number, now: number): WindowState {
		const inWindow = times.filter((t) => t > now - length);
		const remaining = Math.max(0, limit - inWindow.length);
		// The request that frees a place is the oldest one still counted beyond the limit.
		const freeing = inWindow.length >= limit ? inWindow[inWindow.length - limit] : inWindow[0];
		return { limit, remaining, resetAt: freeing !== undefined ? freeing + length : now + length };
	}

	private mostConstraining(minute: WindowState, hour: WindowState): WindowState {
		return hour.remaining < minute.remaining ? hour : minute;
	}
}
