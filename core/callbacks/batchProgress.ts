import type { ApiRuntime } from '../http/apiRequest';
import type { JobRecord } from '../types';
import { getJob } from '../jobs/getJob';
import { isTerminal } from '../jobs/jobOutcome';
import { settle } from '../settle';

/** A job still missing once the batch should have ended is looked up again at most this often. */
const RECHECK_MS = 60_000;
/** Some margin past the batch's expected end before a missing callback counts as late or lost. */
const LATE_MARGIN_MS = 15_000;

/**
 * What one process knows, between callbacks, of a batch of jobs that share one callback URL (n8n's
 * Wait for Callback). A callback is answered from this memory, never after a round of lookups:
 * looking every job up on every callback costs O(n²) requests and kept the service's 15 s waiting.
 * Lookups happen only for jobs in doubt: all unseen ones when this process did not watch the batch
 * from its start (a restart, another process), and late ones whose callback may be lost.
 */
export class BatchProgress {
	private readonly ended = new Map<string, JobRecord>();
	private readonly checkedAt = new Map<string, number>();
	private resumed = false;

	constructor(
		readonly jobIds: readonly string[],
		/** When every job of the batch should have ended, by the estimates. */
		readonly expectedEndAtMs: number,
		/**
		 * Whether this process can have seen every callback since the batch was created. A job that
		 * should have ended before that (its `expectedEnds` entry is earlier) may have called back
		 * while nobody could accept it (n8n refuses callbacks until the execution is parked).
		 */
		private readonly watchedFromStart: boolean,
		/** Each job's own expected end, when known, and when the batch began to be watched. */
		private readonly perJob: { expectedEnds: ReadonlyMap<string, number>; watchedSinceMs: number } | undefined = undefined,
	) {}

	includes(jobId: string): boolean {
		return this.jobIds.includes(jobId);
	}

	/** A confirmed state of one job (from a callback or a lookup). */
	record(job: JobRecord, nowMs: number): void {
		if (!this.includes(job.id)) return;
		if (isTerminal(job)) this.ended.set(job.id, job);
		this.checkedAt.set(job.id, nowMs);
	}

	get complete(): boolean {
		return this.jobIds.every((id) => this.ended.has(id));
	}

	/** Jobs worth a lookup now; empty in the usual case of callbacks arriving where they should. */
	inDoubt(nowMs: number): string[] {
		const late = nowMs > this.expectedEndAtMs + LATE_MARGIN_MS;
		return this.jobIds.filter((id) => {
			if (this.ended.has(id)) return false;
			const checked = this.checkedAt.get(id);
			if (checked === undefined) return !this.watchedFromStart || late || this.mayHaveCalledUnseen(id);
			return late && nowMs - checked >= RECHECK_MS;
		});
	}

	/**
	 * The jobs in doubt, marked as being checked now: callbacks that arrive together must not each
	 * look up the same jobs (the bench saw one job looked up 7 times in a second).
	 */
	takeInDoubt(nowMs: number): string[] {
		const ids = this.inDoubt(nowMs);
		for (const id of ids) this.checkedAt.set(id, nowMs);
		return ids;
	}

	/** Jobs taken by takeInDoubt that were not looked at after all. */
	untake(jobIds: readonly string[]): void {
		for (const id of jobIds) this.checkedAt.delete(id);
	}

	/** The job should have ended before its callbacks could be received here. */
	private mayHaveCalledUnseen(jobId: string): boolean {
		const expectedEnd = this.perJob?.expectedEnds.get(jobId);
		return expectedEnd !== undefined && expectedEnd < this.perJob!.watchedSinceMs;
	}

	/** True exactly once, when the batch is complete: the caller that gets it resumes the run. */
	claimResume(): boolean {
		if (!this.complete || this.resumed) return false;
		this.resumed = true;
		return true;
	}

	/** Every job's final record, in batch order (only once complete). */
	jobs(): JobRecord[] {
		return this.jobIds.map((id) => this.ended.get(id)!);
	}
}

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

/** Batches this process follows, by a key of the host's (n8n: the execution id). */
export class BatchBook<Progress = BatchProgress> {
	private readonly batches = new Map<string, { progress: Progress; openedAtMs: number }>();

	constructor(private readonly keepMs = 26 * 60 * 60 * 1000) {}

	open<Opened extends Progress>(key: string, progress: Opened, nowMs: number): Opened {
		for (const [other, entry] of this.batches) {
			if (nowMs - entry.openedAtMs > this.keepMs) this.batches.delete(other);
		}
		this.batches.set(key, { progress, openedAtMs: nowMs });
		return progress;
	}

	get(key: string): Progress | undefined {
		return this.batches.get(key)?.progress;
	}

	close(key: string): void {
		this.batches.delete(key);
	}
}
