import type { JobRecord } from '../types';
import { firstNumber, firstString, idOf, isObject, malformed, unwrap, type Json } from './answerFields';
import { normaliseStatus } from './jobStatus';
import { parseTimestamp } from './timestamp';

/*
 * A list of strings in `resultUrls` is specified. Also read: snake_case, a single string, objects
 * with `url` or `href` (APIs that describe each file), and one `resultUrl`/`videoUrl` (APIs with
 * a single output).
 */
function resultUrlsOf(job: Json): string[] {
	const list = job.resultUrls ?? job.result_urls;
	const items = Array.isArray(list) ? list : [list];
	const urls = items
		.map((item) => (isObject(item) ? firstString(item.url, item.href) : firstString(item)))
		.filter((url): url is string => url !== undefined);
	if (urls.length > 0) return urls;
	const single = firstString(job.resultUrl, job.result_url, job.videoUrl, job.video_url);
	return single ? [single] : [];
}

/** Whether a body can be read as a job record without a fallback id. */
export function isJobBody(body: unknown): boolean {
	const job = unwrap(body);
	return job !== undefined && idOf(job) !== undefined;
}

/** Reads a job record in any spelling docs/api.md#tolerated-spellings lists; throws TransportError if it is none. */
export function parseJob(body: unknown, fallbackId?: string): JobRecord {
	const job = unwrap(body);
	const id = job ? (idOf(job) ?? firstString(fallbackId)) : undefined;
	if (!job || !id) throw malformed('job record', firstString(fallbackId));
	// `state` is the usual other name for `status`.
	const rawStatus = firstString(job.status, job.state) ?? '';
	const status = normaliseStatus(rawStatus);
	const record: JobRecord = { id, status, rawStatus, resultUrls: resultUrlsOf(job) };

	// Decided as an integer 0–100: a stray value is clamped rather than shown as 130 %.
	const progress = firstNumber(job.progress);
	if (progress !== undefined) record.progress = Math.min(100, Math.max(0, progress));
	// Here and below: camelCase is specified, snake_case is the other common JSON convention.
	const creditsQueued = firstNumber(job.creditsQueued, job.credits_queued);
	if (creditsQueued !== undefined) record.creditsQueued = creditsQueued;
	const creditsUsed = firstNumber(job.creditsUsed, job.credits_used);
	if (creditsUsed !== undefined) record.creditsUsed = creditsUsed;
	const createdAt = parseTimestamp(job.createdAt ?? job.created_at);
	if (createdAt) record.createdAt = createdAt;
	const completedAt = parseTimestamp(job.completedAt ?? job.completed_at);
	if (completedAt) record.completedAt = completedAt;

	// `error` is specified as a string; services with error objects put the text in `message` or
	// `detail`, and `failureReason` is another name job APIs give it.
	const error = job.error;
	const errorMessage = isObject(error)
		? firstString(error.message, error.detail)
		: firstString(
				error,
				job.failureReason,
				job.failure_reason,
				// A plain `message` is a failure reason only on a failed job.
				status === 'failed' ? job.message : undefined,
			);
	if (errorMessage) record.error = errorMessage;
	// `errorCode` was decided (docs/api.md#job-record); `error.code` is the error-object form.
	const errorCode = firstString(
		job.errorCode,
		job.error_code,
		isObject(error) ? error.code : undefined,
	);
	if (errorCode) record.errorCode = errorCode;
	const model = firstString(job.model);
	if (model) record.model = model;
	return record;
}
