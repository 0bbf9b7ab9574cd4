import type { ApiRuntime } from './apiRequest';
import type { JobRecord } from './types';
import { getJob } from './getJob';
import { isTerminal } from './jobOutcome';

export type BatchOutcome =
	| {
			complete: true;
			jobs: JobRecord[];
			/**
			 * The job that ended last (latest completion, then latest in the batch). Callbacks of two
			 * jobs ending together may both find the batch complete; only this job's callback should
			 * act on it, so the batch is finished exactly once.
			 */
			lastEndedJobId: string;
	  }
	| { complete: false; pendingJobId: string; pendingStatus: string };

/**
 * Decides whether every job of a batch that shares one callback URL has ended, given the jobs
 * already known to have ended (from confirmed callbacks). Jobs are looked up newest first and the
 * search stops at the first one still running: the newest job usually ends last, so an early
 * callback costs one lookup and the last one costs a lookup per job, whose answers are the batch's
 * results.
 */
export async function batchOutcome(
	runtime: ApiRuntime,
	jobIds: readonly string[],
	known: ReadonlyMap<string, JobRecord>,
): Promise<BatchOutcome> {
	const jobs = new Map(known);
	for (const jobId of [...new Set(jobIds)].reverse()) {
		if (jobs.get(jobId) && isTerminal(jobs.get(jobId)!)) continue;
		const job = await getJob(runtime, jobId);
		if (!isTerminal(job)) return { complete: false, pendingJobId: job.id, pendingStatus: job.rawStatus || job.status };
		runtime.limiter.jobEnded(job.id);
		jobs.set(jobId, job);
	}
	const ordered = jobIds.map((id) => jobs.get(id)!);
	let last = 0;
	ordered.forEach((job, index) => {
		if ((job.completedAt ?? '') >= (ordered[last].completedAt ?? '')) last = index;
	});
	return { complete: true, jobs: ordered, lastEndedJobId: ordered[last].id };
}
