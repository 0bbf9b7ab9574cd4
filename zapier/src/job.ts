import { SAMPLE_JOB, jobView, type JobRecord, type JobView } from '../../core';

/** A job as a Zap step's output: core's view of it, plus what the step adds. */
export type JobOutput = JobView & { id: string } & Record<string, unknown>;

/** Zapier dedupes and labels by `id`: the job id, under both names. */
export function jobOutput(job: JobRecord, extra: Record<string, unknown> = {}): JobOutput {
	return { id: job.id, ...jobView(job), ...extra };
}

/** The step's output for a finished job, before a run has made one. */
export const JOB_SAMPLE: JobOutput = jobOutput(SAMPLE_JOB);

/** Labels for every field a job step returns, so later steps can map them by name. */
export const JOB_OUTPUT_FIELDS = [
	{ key: 'jobId', label: 'Job ID', type: 'string' as const, primary: true },
	{ key: 'status', label: 'Status (queued, running, done or failed)', type: 'string' as const },
	{ key: 'videoUrl', label: 'Video URL (MP4)', type: 'string' as const },
	{ key: 'resultUrls[]', label: 'All Result URLs', type: 'string' as const },
	{ key: 'progress', label: 'Progress (%)', type: 'number' as const },
	{ key: 'creditsQueued', label: 'Credits Reserved', type: 'number' as const },
	{ key: 'creditsUsed', label: 'Credits Used', type: 'number' as const },
	{ key: 'createdAt', label: 'Created At', type: 'datetime' as const },
	{ key: 'completedAt', label: 'Completed At', type: 'datetime' as const },
	{ key: 'error', label: 'Failure Reason', type: 'string' as const },
	{ key: 'errorCode', label: 'Failure Code', type: 'string' as const },
];
