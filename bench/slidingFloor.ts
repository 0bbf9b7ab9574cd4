import type { PlanLimits } from '../core/types';
import { RateWindows } from '../sandbox/rateLimits';

/**
 * The least time a client that knew every job's render time in advance would need for a batch,
 * with the plan's windows sliding as the sandbox keeps them (docs/api.md#rate-windows): each create
 * the moment a place is free and both windows take a request, each job's `lookupsPerJob` lookups (0
 * with signed callbacks, 1 to confirm an unsigned one) as soon after its end as they take one,
 * creates first. physicalLimit counts the same requests against whole windows, which is a lower
 * bound but not a time any client can reach once the requests pass one hour's worth: with a sliding
 * hour the request past the hour's limit waits an hour after the first one, and so on for each
 * after it, so the batch's second hour mirrors its first. Virtual ms from the first create to the
 * later of the last request and the last job's end.
 */
export function slidingWindowFloorMs(renderMs: number[], limits: PlanLimits, lookupsPerJob: 0 | 1): number {
	// The sandbox's own windows, so that the floor counts exactly what the sandbox refuses.
	const windows = new RateWindows();
	let now = 0;
	let next = 0;
	let running: number[] = [];
	const toLook: number[] = [];
	let lastEnd = 0;
	while (next < renderMs.length || toLook.length > 0) {
		running = running.filter((end) => end > now);
		const canCreate = next < renderMs.length && running.length < limits.concurrentJobs;
		const lookable = toLook.findIndex((end) => end <= now);
		if (!canCreate && lookable < 0) {
			now = Math.min(...running, ...toLook);
			continue;
		}
		const turn = windows.take('floor', limits, now);
		if (!turn.allowed) {
			now = turn.retryAtMs;
			continue;
		}
		if (canCreate) {
			const end = now + renderMs[next++];
			running.push(end);
			lastEnd = Math.max(lastEnd, end);
			if (lookupsPerJob === 1) toLook.push(end);
		} else {
			toLook.splice(lookable, 1);
		}
	}
	return Math.max(now, lastEnd);
}

/** A batch's render times in the order its jobs were made: what physicalLimit and slidingWindowFloorMs take. */
export function rendersInCreationOrder(jobs: ReadonlyArray<{ createdAt: number; endsAt: number }>): number[] {
	return [...jobs].sort((a, b) => a.createdAt - b.createdAt).map((job) => job.endsAt - job.createdAt);
}
