import type { ApiRuntime } from '../http/apiRequest';
import type { AbortSignalLike } from '../http/transport';
import type { JobRecord } from '../types';
import { getJob } from './getJob';
import { nextPollDelayMs } from '../pacing/pollSchedule';
import { jobFailedError } from './jobOutcome';
import { TimeoutError, TransportError } from '../errors/errors';
import { settle } from '../settle';
import { sleepUnlessCancelled } from '../http/cancellation';

export const DEFAULT_WAIT_TIMEOUT_MS = 10 * 60_000;
/** Used when nothing is known of the job's size: the middle of 30–90 s (docs/api.md#render-time). */
const UNKNOWN_EXPECTED_MS = 60_000;

export interface WaitForJobOptions {
	/** Give up after this long (default 10 minutes); the error names the job id. */
	timeoutMs?: number;
	signal?: AbortSignalLike;
	/** Each look must be answered by then (see ApiCall); keep timeoutMs inside it. */
	deadlineAtMs?: number;
	/** Expected render time (from generateVideo); decides when to take the first look. */
	expectedMs?: number;
	/** When the job was created, if earlier than now. */
	createdAtMs?: number;
	/** Called with each look at a still-running job. */
	onProgress?: (job: JobRecord) => void;
	/** Told when the next look is due (host clock), for a caller that answers "look again in N s". */
	onLookScheduled?: (atMs: number) => void;
	/**
	 * What one lookup is worth, as a share of the key's median render time (default
	 * DEFAULT_LOOK_COST_SHARE): higher spends fewer lookups and learns of ends later. Used once
	 * the key's render times are learned; the bench draws its trade-off curve with it.
	 */
	lookCostShare?: number;
}

/**
 * Polls a job until it is done, spending as few requests as the schedule allows. Resolves with
 * the done job; a failed job rejects with JobFailedError, the deadline or a cancel with
 * TimeoutError (both naming the job id so a later Get Job can pick it up).
 */
export async function waitForJob(
	runtime: ApiRuntime,
	jobId: string,
	options: WaitForJobOptions = {},
): Promise<JobRecord> {
	const startedAt = runtime.clock.now();
	const createdAt = Math.min(options.createdAtMs ?? startedAt, startedAt);
	const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
	const deadline = startedAt + timeoutMs;
	const givenMs = options.expectedMs ?? UNKNOWN_EXPECTED_MS;
	const expectedMs = runtime.calibration.calibrated(givenMs);
	// This loop will see the job end: creates waiting for its slot need not look it up too.
	runtime.limiter.watchingJob(jobId);
	try {
		return await pollUntilEnded(runtime, jobId, options, { createdAt, timeoutMs, deadline, givenMs, expectedMs });
	} finally {
		// Ended, the job's place is free already (getJob said so). Timed out or cancelled, it may
		// still render, but nothing here will see it end: a create that needs its place looks it up
		// once, rather than waiting out its whole hold (a retried run would otherwise wait ~70 s).
		runtime.limiter.notWatchingJob(jobId);
		// Seen done, it was learned from already; otherwise nothing here will see its end.
		runtime.calibration.forget(jobId);
	}
}

interface PollPlan {
	createdAt: number;
	timeoutMs: number;
	deadline: number;
	givenMs: number;
	expectedMs: number;
}

async function pollUntilEnded(runtime: ApiRuntime, jobId: string, options: WaitForJobOptions, plan: PollPlan): Promise<JobRecord> {
	const { clock, random } = runtime;
	const { createdAt, timeoutMs, deadline, givenMs, expectedMs } = plan;
	let progress: number | undefined;
	for (let attempt = 0; ; attempt++) {
		const now = clock.now();
		// Asked at each look: jobs ending or seen running meanwhile (this batch's too) teach the key's distribution.
		const learnedMs = runtime.calibration.learnedTimes(givenMs, jobId);
		const delay = nextPollDelayMs({ attempt, expectedMs, elapsedMs: now - createdAt, progress, learnedMs, lookCostShare: options.lookCostShare, random });
		const lastLook = now + delay >= deadline;
		const what = `Waiting for Omni Video job ${jobId}`;
		options.onLookScheduled?.(now + Math.min(delay, deadline - now));
		await sleepUnlessCancelled(runtime.sleep, Math.min(delay, deadline - now), options.signal, what, jobId);
		const looked = await settle(getJob(runtime, jobId, { signal: options.signal, deadlineAtMs: options.deadlineAtMs }));
		// One unreadable answer is no reason to give up a job that is still rendering.
		if (!looked.ok && !(looked.error instanceof TransportError && looked.error.failure === 'malformed' && !lastLook)) {
			throw looked.error;
		}
		if (!looked.ok) continue;
		const job = looked.value;
		if (job.status === 'done') {
			learnRenderTime(runtime, job, givenMs);
			return job;
		}
		if (job.status === 'failed') throw jobFailedError(job);
		progress = job.progress;
		// Still running this long: the key's distribution counts it (a batch shows its short jobs first).
		runtime.calibration.seenRunning(jobId, givenMs, clock.now() - createdAt);
		options.onProgress?.(job);
		if (lastLook) {
			throw new TimeoutError(
				`Omni Video job ${jobId} is still ${job.rawStatus || 'running'} after ` +
					`${Math.round(timeoutMs / 1000)} s of waiting. It goes on rendering: look it up ` +
					'later with Get Job and this job id, or raise the timeout.',
				{ jobId, code: 'wait_timeout' },
			);
		}
	}
}

/**
 * A finished job says how long it really took: the key's calibration learns from it. Exported for
 * hosts that hear of a job's end by its callback rather than by this loop's lookup.
 */
export function learnRenderTime(runtime: ApiRuntime, job: JobRecord, expectedMs: number): void {
	// Parsed records hold ISO timestamps (see parseJob).
	const created = Date.parse(job.createdAt ?? '');
	const completed = Date.parse(job.completedAt ?? '');
	if (Number.isFinite(created) && Number.isFinite(completed)) runtime.calibration.record(expectedMs, completed - created, job.id);
}
