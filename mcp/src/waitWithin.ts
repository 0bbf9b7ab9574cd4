import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isOmniVideoError, isTerminal, type JobRecord } from '../../core';
import type { Connection } from './connection';
import { lookAgainSeconds, type ToolContext, type ToolExtra } from './context';
import { jobResult } from './jobResult';
import type { Progress } from './progress';

export interface WaitPlan {
	job: JobRecord;
	deadlineMs: number;
	expectedMs?: number;
	retried?: boolean;
	requestId?: string;
	progress: Progress;
}

/**
 * Waits for a job until the call's deadline and answers with the video, the failure, or a receipt
 * (not an error) saying which tool to call and when. A cancelled call stops polling at once.
 */
export async function waitWithin(context: ToolContext, connection: Connection, extra: ToolExtra, plan: WaitPlan): Promise<CallToolResult> {
	let job = plan.job;
	const leftMs = plan.deadlineMs - Date.now();
	if (!isTerminal(job) && leftMs > 1_000) {
		plan.progress.say(`Job ${job.id} is ${job.rawStatus}`);
		try {
			job = await connection.client.waitForJob(job.id, {
				timeoutMs: leftMs,
				// A look that would be answered after the bound (one due at it, or one the plan's windows
				// cannot fit) is not taken: requests are scarce (200 an hour on Pro), the receipt carries the
				// job as last seen, and wait_for_job goes on with the schedule.
				deadlineAtMs: plan.deadlineMs,
				signal: extra.signal,
				expectedMs: plan.expectedMs,
				createdAtMs: plan.retried ? Date.parse(job.createdAt ?? '') || undefined : undefined,
				onProgress: (seen) => {
					job = seen;
					context.lastSeen.set(seen.id, seen);
					context.spend.observe(connection.fingerprint, seen);
					plan.progress.say(`Job ${seen.id} is ${seen.rawStatus}${seen.progress !== undefined ? ` (${seen.progress} %)` : ''}`);
				},
			});
		} catch (error) {
			// A failed job is a result with its reason; the bound reached is a receipt; anything else is the caller's error.
			if (isOmniVideoError(error) && error.kind === 'job_failed') job = await connection.client.getJob(job.id).catch(() => ({ ...job, status: 'failed' as const, error: error.message }));
			else if (!(isOmniVideoError(error) && (error.code === 'wait_timeout' || error.kind === 'rate_limit'))) throw error;
		}
	}
	context.spend.observe(connection.fingerprint, job);
	context.lastSeen.set(job.id, job);
	return answer(context, job, plan);
}

function answer(context: ToolContext, job: JobRecord, plan: WaitPlan): CallToolResult {
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
	const afterSeconds = lookAgainSeconds(context, job.id);
	return jobResult(job, {
		...common,
		nextStep: { tool: 'wait_for_job', arguments: { jobId: job.id }, afterSeconds: 0 },
		message:
			`${was}Job ${job.id} was ${job.rawStatus} when last seen and keeps rendering on Omni Video; it is expected in about ${afterSeconds} s. This call stopped waiting so as not to run into your client's timeout. ` +
			`Call wait_for_job with jobId "${job.id}" now (it waits up to ${Math.round(context.settings.waitSeconds)} s), or get_job with the same id in ${afterSeconds} s. Do not call generate_video again for it.`,
	});
}
