import type { ApiRuntime } from '../http/apiRequest';
import { callApi } from '../http/apiRequest';
import type { AbortSignalLike } from '../http/transport';
import type { JobRecord } from '../types';
import type { RequestPriority } from '../pacing/limiter';
import { parseJob } from '../answers/parseJob';
import { validateJobId } from '../input/validateJobId';
import { isTerminal } from './jobOutcome';
import { jobSeenEnded } from '../pacing/endedJobs';

/** The job path for an opaque id (ids are never parsed, only encoded). */
export function jobPath(jobId: string): string {
	return `/api/v1/jobs/${encodeURIComponent(jobId)}`;
}

export interface GetJobOptions {
	signal?: AbortSignalLike;
	/** Absolute time on the host's clock by which the answer is needed (see ApiCall). */
	deadlineAtMs?: number;
	/** `urgent` for confirming a callback: it goes ahead of bulk work on the key. */
	priority?: RequestPriority;
	/** How long 429s and refused connections may be waited out (see ApiCall; default 10 min). */
	retryBudgetMs?: number;
}

/** Looks a job up; a finished job frees its place in the concurrency limit. */
export async function getJob(
	runtime: ApiRuntime,
	jobId: string,
	options: GetJobOptions = {},
): Promise<JobRecord> {
	const id = validateJobId(jobId);
	const response = await callApi(runtime, {
		operation: 'getJob',
		method: 'GET',
		path: jobPath(id),
		jobId: id,
		signal: options.signal,
		deadlineAtMs: options.deadlineAtMs,
		priority: options.priority,
		retryBudgetMs: options.retryBudgetMs,
	});
	const job = parseJob(response.body, id);
	if (isTerminal(job)) jobSeenEnded(runtime, job);
	return job;
}
