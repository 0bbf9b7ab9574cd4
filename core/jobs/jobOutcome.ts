import type { JobRecord } from '../types';
import { JobFailedError } from '../errors/errors';

const HINTS: Record<string, string> = {
	content_policy: 'Change the prompt or the source image so that it meets the content policy.',
	invalid_input: 'Check the prompt and the source file, then run again.',
	input_fetch_failed:
		'The service could not fetch the source file: upload it again (upload links expire) or use a public URL.',
	timeout: 'The service gave up rendering: try again, perhaps shorter or at a lower resolution.',
	internal: 'The service failed on its side: try again later.',
};

/** The error for a job that ended `failed`: the service's reason, the job id and what to do. */
export function jobFailedError(job: JobRecord): JobFailedError {
	const reason = job.error || 'no reason given';
	const hint = (job.errorCode && HINTS[job.errorCode]) || 'Check the job in your Omni Video dashboard.';
	return new JobFailedError(`Omni Video job ${job.id} failed: ${reason}. ${hint}`, reason, {
		jobId: job.id,
		code: job.errorCode,
		hint,
	});
}

export function isTerminal(job: JobRecord): boolean {
	return job.status === 'done' || job.status === 'failed';
}
