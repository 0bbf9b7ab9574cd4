import type { JobRecord } from '../../core';
import type { Connection } from './connection';
import type { ToolContext } from './context';

export interface KnownJob {
	job: JobRecord;
	/** When it was seen, when the answer comes from an earlier look rather than one made now. */
	seenAtMs?: number;
	/** What the job's schedule starts from when none runs here yet. */
	expectedMs?: number;
	createdAtMs?: number;
}

/**
 * A job as the server's records have it (seen by this process or another sharing them), and only
 * when they have nothing, as one lookup answers: a call about a job already watched spends nothing.
 * A tool calls ownJob first: a team member reads only the jobs they made.
 */
export async function knownJob(context: ToolContext, connection: Connection, jobId: string, options: { signal?: AbortSignal; deadlineAtMs?: number }): Promise<KnownJob> {
	const seen = await context.watches.lastSeen(connection.fingerprint, jobId);
	// For a job the records noted at its create, the schedule counts from that (JobWatches); for
	// another, from the creation the service reports, with the user's render time or core's estimate.
	const start = (job: JobRecord) => ({ createdAtMs: Date.parse(job.createdAt ?? '') || undefined, expectedMs: context.settings.expectedRenderSeconds === undefined ? undefined : context.settings.expectedRenderSeconds * 1000 });
	if (seen) return { job: seen.job, seenAtMs: seen.seenAtMs, ...start(seen.job) };
	const job = await connection.client.getJob(jobId, options);
	await context.watches.seen(connection.fingerprint, job).catch(() => undefined);
	return { job, ...start(job) };
}
