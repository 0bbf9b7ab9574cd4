import type { ApiRuntime } from '../http/apiRequest';
import type { JobRecord } from '../types';
import { getJob } from '../jobs/getJob';
import { settle } from '../settle';

/** What reconcileBatch needs of a batch: its jobs in doubt, and where to record what a lookup saw. */
export interface JobsInDoubt {
	takeInDoubt(nowMs: number): string[];
	untake(jobIds: readonly string[]): void;
	record(job: JobRecord, nowMs: number): unknown;
}

/**
 * Looks up the batch's jobs in doubt, one after the other as bulk work (a callback's confirmation
 * goes first), stopping at the first that cannot be answered before the deadline.
 */
export async function reconcileBatch(
	runtime: ApiRuntime,
	progress: JobsInDoubt,
	options: { deadlineAtMs?: number } = {},
): Promise<void> {
	const taken = progress.takeInDoubt(runtime.clock.now());
	for (const [index, jobId] of taken.entries()) {
		// Seen ended in this process already (e.g. looked up to free its slot while the batch was created).
		const known = runtime.endedJobs.recall(jobId);
		if (known) {
			progress.record(known, runtime.clock.now());
			continue;
		}
		const looked = await settle(getJob(runtime, jobId, { deadlineAtMs: options.deadlineAtMs }));
		if (!looked.ok) {
			// Not looked at after all: the next callback takes these again.
			progress.untake(taken.slice(index));
			return;
		}
		progress.record(looked.value, runtime.clock.now());
	}
}
