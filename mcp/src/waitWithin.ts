import type { CallToolResult } from '@modelcontextprotocol/server';
import { isOmniVideoError, isTerminal, type JobRecord } from '../../core';
import type { Connection } from './connection';
import type { ToolContext } from './context';
import type { ToolCall } from './toolCall';
import { jobResult } from './jobResult';
import type { Progress } from './progress';

export interface WaitPlan {
	job: JobRecord;
	deadlineMs: number;
	expectedMs?: number;
	createdAtMs?: number;
	retried?: boolean;
	requestId?: string;
	/** When the job was last seen, when that was not just now (the answer says how old it is). */
	seenAtMs?: number;
	progress: Progress;
}

/**
 * Waits for a job until the call's deadline on the job's one look schedule (see JobWatches) and
 * answers with the video, the failure, or a receipt (not an error) saying which tool to call and
 * when the next look is due. A cancelled call stops waiting at once.
 */
export async function waitWithin(context: ToolContext, connection: Connection, call: ToolCall, plan: WaitPlan): Promise<CallToolResult> {
	const last = isTerminal(plan.job) ? { job: plan.job, seenAtMs: plan.seenAtMs } : await watchUntilDeadline(context, connection, call, plan);
	void context.spend.observe(connection.fingerprint, last.job).catch(() => undefined);
	return answer(context, last.job, plan, last.seenAtMs, last.nextLookAtMs);
}

/** The job as last seen when it ended or the call's deadline came, and when its next look is due. */
async function watchUntilDeadline(
	context: ToolContext,
	connection: Connection,
	call: ToolCall,
	plan: WaitPlan,
): Promise<{ job: JobRecord; seenAtMs?: number; nextLookAtMs?: number }> {
	let job = plan.job;
	let seenAtMs = plan.seenAtMs;
	const cancelled = () => new Error(`The call was cancelled; job ${job.id} goes on rendering.`);
	plan.progress.say(`Job ${job.id} is ${job.rawStatus}`);
	// Setting the schedule up reads the records: slow records hold the answer no longer than the bound either.
	const watching = context.watches.watch(connection, job, { expectedMs: plan.expectedMs, createdAtMs: plan.createdAtMs });
	const watch = await untilDeadline(watching, plan.deadlineMs, call.signal);
	if (watch === 'cancelled') throw cancelled();
	if (watch === 'deadline') {
		// The schedule still starts, and the agent's next call joins it.
		watching.catch(() => undefined);
		return { job, seenAtMs };
	}
	const joined = watch.join((seen) => {
		job = seen;
		seenAtMs = undefined;
		plan.progress.say(`Job ${seen.id} is ${seen.rawStatus}${seen.progress !== undefined ? ` (${seen.progress} %)` : ''}`);
	});
	let ended: JobRecord | 'deadline' | 'cancelled' = 'deadline';
	try {
		ended = await untilDeadline(watch.ended, plan.deadlineMs, call.signal);
		if (ended !== 'cancelled' && ended !== 'deadline') {
			job = ended;
			seenAtMs = undefined;
		}
	} catch (error) {
		// The schedule ran out of the plan's requests or its time: the receipt carries the job as last seen.
		if (!(isOmniVideoError(error) && (error.code === 'wait_timeout' || error.kind === 'rate_limit' || error.kind === 'timeout'))) throw error;
	} finally {
		joined.leave(ended === 'cancelled');
	}
	if (ended === 'cancelled') throw cancelled();
	return { job, seenAtMs, nextLookAtMs: watch.nextLookAtMs() };
}

/** What `until` settles with, or which came first: the call's deadline or its cancellation. */
async function untilDeadline<T>(until: Promise<T>, deadlineMs: number, signal: AbortSignal): Promise<T | 'deadline' | 'cancelled'> {
	let timer: NodeJS.Timeout | undefined;
	let onAbort: (() => void) | undefined;
	const stops = new Promise<'deadline' | 'cancelled'>((resolve) => {
		timer = setTimeout(() => resolve('deadline'), Math.max(0, deadlineMs - Date.now()));
		onAbort = () => resolve('cancelled');
		if (signal.aborted) onAbort();
		signal.addEventListener('abort', onAbort);
	});
	try {
		return await Promise.race([until, stops]);
	} finally {
		clearTimeout(timer);
		if (onAbort) signal.removeEventListener('abort', onAbort);
	}
}

/** Seconds until the job's next look is due (at least 1), else until it is expected to end, else a guess of 20. */
export function afterSecondsFor(nextLookAtMs: number | undefined, expectedEndAtMs?: number): number {
	const at = nextLookAtMs ?? expectedEndAtMs;
	// A second past the look: its answer is in by then.
	return at === undefined ? 20 : Math.max(1, Math.ceil((at - Date.now()) / 1000) + 1);
}

/** "as seen 12 s ago", when the answer comes from an earlier look. */
export function seenAgo(seenAtMs: number | undefined): string {
	return seenAtMs === undefined ? '' : ` (as last looked up ${Math.max(0, Math.round((Date.now() - seenAtMs) / 1000))} s ago)`;
}

function answer(context: ToolContext, job: JobRecord, plan: WaitPlan, seenAtMs: number | undefined, nextLookAtMs: number | undefined): CallToolResult {
	const common = { retried: plan.retried, requestId: plan.requestId };
	const was = plan.retried ? 'This call was a retry: it got back the job an earlier identical call made, and made no second video. ' : '';
	if (job.status === 'done') {
		return jobResult(job, { ...common, message: `${was}Video ready (job ${job.id}): ${job.resultUrls[0] ?? 'no URL was given'}. Show the user the link; it may expire, so download it soon if needed.` });
	}
	if (job.status === 'failed') {
		return jobResult(job, {
			...common,
			message: `${was}Omni Video job ${job.id} failed: ${job.error ?? 'no reason given'}${job.errorCode ? ` (${job.errorCode})` : ''}. No credits are charged for it. Change what the reason names (the prompt or the source file), then call generate_video again with newVideo: true.`,
		});
	}
	const afterSeconds = afterSecondsFor(nextLookAtMs);
	return jobResult(job, {
		...common,
		nextStep: { tool: 'wait_for_job', arguments: { jobId: job.id }, afterSeconds },
		message:
			`${was}Job ${job.id} was ${job.rawStatus}${seenAgo(seenAtMs)} and keeps rendering on Omni Video; its next look is due in about ${afterSeconds} s. This call stopped waiting so as not to run into your client's timeout. ` +
			`Call wait_for_job with jobId "${job.id}" in ${afterSeconds} s (it waits up to ${Math.round(context.settings.waitSeconds)} s). Do not call generate_video again for it.`,
	});
}
