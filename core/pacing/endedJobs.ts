import type { JobRecord } from '../types';
import type { ApiRuntime } from '../http/apiRequest';
import { perKey } from './perKey';

/** How many ended jobs one key's memory keeps (a record is a few hundred bytes). */
const REMEMBERED = 1_000;

/**
 * The jobs of one key that this process has seen ended (by a lookup or a confirmed callback).
 * An ended job never changes again, so whoever needs its outcome later in this process (a batch
 * resuming after its creates, which looked jobs up to free their slots) reads it here instead of
 * spending another request. Another process simply does not find it and looks it up.
 */
export class EndedJobs {
	private readonly jobs = new Map<string, JobRecord>();

	remember(job: JobRecord): void {
		this.jobs.delete(job.id);
		this.jobs.set(job.id, job);
		if (this.jobs.size > REMEMBERED) this.jobs.delete(this.jobs.keys().next().value as string);
	}

	recall(jobId: string): JobRecord | undefined {
		return this.jobs.get(jobId);
	}
}

/** The memory of one key in this process, shared like its limiter. */
export const sharedEndedJobs = perKey(() => new EndedJobs());

/** A job was seen ended: its slot is free, and its outcome is kept for whoever needs it next. */
export function jobSeenEnded(runtime: Pick<ApiRuntime, 'limiter' | 'endedJobs'>, job: JobRecord): void {
	runtime.limiter.jobEnded(job.id);
	runtime.endedJobs.remember(job);
}
