import { describe, throwIfProblems } from './fieldProblems';

/** A job id as the user typed or mapped it: trimmed, non-empty, no spaces inside, else refused. */
export function validateJobId(id: unknown): string {
	let trimmed = '';
	if (typeof id === 'string') trimmed = id.trim();
	// An expression may hand over a numeric id; ids are opaque, so its text is the id.
	else if (typeof id === 'number' && Number.isFinite(id)) trimmed = String(id);
	if (trimmed === '' || /\s/.test(trimmed)) {
		throwIfProblems([
			{
				field: 'jobId',
				value: id,
				message: `Job ID must be the id returned by Generate Video, such as job_abc123, without spaces (got ${describe(id)}).`,
			},
		]);
	}
	return trimmed;
}
