import type { JobStatus } from '../types';

// Only `done` is specified; the others are the words comparable video APIs use for a finished job.
const DONE = new Set(['done', 'succeeded', 'completed', 'complete', 'success', 'successful']);
// `failed` is specified; `error` and `canceled` were decided as failed (docs/api.md#job-states),
// since a cancelled job will never yield a video; the others are their spelling variants.
const FAILED = new Set(['failed', 'failure', 'error', 'errored', 'canceled', 'cancelled']);

/**
 * Done and failed are final; every other status, known or not, means "still running"
 * (decided: docs/api.md#job-states). Case and spaces are ignored: `Done` is still done.
 */
export function normaliseStatus(raw: unknown): JobStatus {
	const status = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
	if (DONE.has(status)) return 'done';
	if (FAILED.has(status)) return 'failed';
	if (status === 'queued') return 'queued';
	return 'running';
}
