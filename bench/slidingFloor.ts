import type { PlanLimits } from '../core/types';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

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
	const sent: number[] = [];
	// The earliest moment from `at` at which both windows take one more request.
	const roomFrom = (at: number): number => {
		for (;;) {
			const waits: number[] = [];
			const inMinute = sent.length - firstAfter(sent, at - MINUTE_MS);
			const inHour = sent.length - firstAfter(sent, at - HOUR_MS);
			if (inMinute >= limits.requestsPerMinute) waits.push(sent[sent.length - limits.requestsPerMinute] + MINUTE_MS + 1);
			if (inHour >= limits.requestsPerHour) waits.push(sent[sent.length - limits.requestsPerHour] + HOUR_MS + 1);
			if (waits.length === 0) return at;
			at = Math.max(...waits);
		}
	};
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
		const turn = roomFrom(now);
		if (turn > now) {
			now = turn;
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
		sent.push(now);
	}
	return Math.max(now, lastEnd);
}

/** The index of the first sorted time after `at` (binary search). */
function firstAfter(sorted: number[], at: number): number {
	let low = 0;
	let high = sorted.length;
	while (low < high) {
		const middle = (low + high) >> 1;
		if (sorted[middle] <= at) low = middle + 1;
		else high = middle;
	}
	return low;
}
