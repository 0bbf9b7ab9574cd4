import type { Sandbox } from '../sandbox';
import type { PlanLimits } from '../core/types';

/** One strategy's run of one batch, every count read from the sandbox's journal and job store. */
export interface BatchResult {
	strategy: string;
	plan: string;
	jobs: number;
	/** First request to the last job known ended by the client (virtual ms). */
	wallMs: number;
	/** When the last job ended, from the start (virtual ms). */
	lastEndMs: number;
	/** What the plan allows at best (see physicalLimit). */
	limitMs: number;
	makespanMs: number;
	rateBoundMs: number;
	apiRequests: number;
	received429: number;
	/** 429s that reached the caller as an error (the client gave up). */
	surfaced429: number;
	/** Rows the client reported failed, for any reason. */
	failedRows: number;
	duplicateJobs: number;
	/** Job end (sandbox endsAt) to the client knowing it, virtual ms. */
	knownDelayMedianMs: number;
	knownDelayP95Ms: number;
	/** Jobs the client never reported ended. */
	unknownJobs: number;
	realMs: number;
	note?: string;
	/** How the run's render times were drawn (`uniform`, `log-normal`). */
	distribution?: string;
}

export function percentile(values: number[], p: number): number {
	if (values.length === 0) return NaN;
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/**
 * The plan's physical limit for a batch: the larger of (1) list-scheduling the jobs' actual render
 * times, in the order they were created, on the plan's concurrent slots (each job starts the
 * moment a slot frees), and (2) the time the rate windows need to let through one create and one
 * lookup per job, sent as early as each window allows.
 */
export function physicalLimit(renderMs: number[], limits: PlanLimits): { limitMs: number; makespanMs: number; rateBoundMs: number } {
	const slots = Array.from({ length: Math.min(limits.concurrentJobs, Math.max(1, renderMs.length)) }, () => 0);
	for (const render of renderMs) {
		const first = slots.indexOf(Math.min(...slots));
		slots[first] += render;
	}
	const makespanMs = Math.max(0, ...slots);
	const requests = renderMs.length * 2;
	// The n-th request (from 0) waits for as many whole windows as it exceeds each window's limit.
	const last = requests - 1;
	const rateBoundMs = Math.max(Math.floor(last / limits.requestsPerMinute) * 60_000, Math.floor(last / limits.requestsPerHour) * 3_600_000);
	return { limitMs: Math.max(makespanMs, rateBoundMs), makespanMs, rateBoundMs };
}

/** Reads a finished run off the sandbox: requests, 429s, duplicates, render times, delays. */
export function measureBatch(options: {
	sandbox: Sandbox;
	strategy: string;
	plan: string;
	limits: PlanLimits;
	rows: number;
	startedAt: number;
	/** When the client knew each job had ended (sandbox clock), by job id. */
	known: Map<string, number>;
	surfaced429: number;
	failedRows: number;
	realMs: number;
	note?: string;
	distribution?: string;
}): BatchResult {
	const { sandbox, known } = options;
	const api = sandbox.journal.filter((entry) => entry.path.startsWith('/api/'));
	const jobs = [...sandbox.jobs.all.values()].sort((a, b) => a.createdAt - b.createdAt);
	const perPrompt = new Map<string, number>();
	for (const job of jobs) perPrompt.set(job.body.prompt, (perPrompt.get(job.body.prompt) ?? 0) + 1);
	const delays: number[] = [];
	let unknownJobs = 0;
	for (const job of jobs) {
		const at = known.get(job.id);
		if (at === undefined) unknownJobs++;
		else delays.push(Math.max(0, at - job.endsAt));
	}
	const lastKnown = Math.max(options.startedAt, ...known.values());
	const limit = physicalLimit(
		jobs.map((job) => job.endsAt - job.createdAt),
		options.limits,
	);
	return {
		strategy: options.strategy,
		plan: options.plan,
		jobs: jobs.length,
		wallMs: lastKnown - options.startedAt,
		lastEndMs: Math.max(0, ...jobs.map((job) => job.endsAt)) - options.startedAt,
		...limit,
		apiRequests: api.length,
		received429: api.filter((entry) => entry.status === 429).length,
		surfaced429: options.surfaced429,
		failedRows: options.failedRows,
		duplicateJobs: [...perPrompt.values()].reduce((sum, count) => sum + count - 1, 0),
		knownDelayMedianMs: percentile(delays, 50),
		knownDelayP95Ms: percentile(delays, 95),
		unknownJobs,
		realMs: options.realMs,
		note: options.note,
		distribution: options.distribution,
	};
}
