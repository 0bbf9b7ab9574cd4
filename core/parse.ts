import type { JobRecord, JobStatus, UploadTicket } from './types';
import { TransportError } from './errors';

type Json = Record<string, unknown>;

const DONE = new Set(['done', 'succeeded', 'completed', 'complete', 'success', 'successful']);
const FAILED = new Set(['failed', 'failure', 'error', 'errored', 'canceled', 'cancelled']);

function isObject(value: unknown): value is Json {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function firstString(...values: unknown[]): string | undefined {
	for (const value of values) if (typeof value === 'string' && value !== '') return value;
	return undefined;
}

function firstNumber(...values: unknown[]): number | undefined {
	for (const value of values) {
		const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
		if (typeof number === 'number' && Number.isFinite(number)) return number;
	}
	return undefined;
}

/** Done and failed are final; every other status, known or not, means "still running". */
export function normaliseStatus(raw: unknown): JobStatus {
	const status = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
	if (DONE.has(status)) return 'done';
	if (FAILED.has(status)) return 'failed';
	if (status === 'queued') return 'queued';
	return 'running';
}

/** ISO 8601, epoch seconds or epoch milliseconds, to ISO 8601 UTC; anything else to undefined. */
export function parseTimestamp(value: unknown): string | undefined {
	let ms: number | undefined;
	const numeric = firstNumber(value);
	if (numeric !== undefined) ms = numeric < 1e11 ? numeric * 1000 : numeric;
	else if (typeof value === 'string') ms = Date.parse(value);
	if (ms === undefined || !Number.isFinite(ms)) return undefined;
	const date = new Date(ms);
	return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

function malformed(what: string): TransportError {
	return new TransportError(
		`The Omni Video API answered, but its ${what} could not be read. Try again; if it persists, the service may have changed its format.`,
		'malformed',
		{ code: 'malformed_response' },
	);
}

function unwrap(body: unknown): Json | undefined {
	if (!isObject(body)) return undefined;
	for (const key of ['data', 'job']) {
		const inner = body[key];
		if (isObject(inner) && (typeof inner.id === 'string' || typeof inner.status === 'string')) return inner;
	}
	return body;
}

function resultUrlsOf(job: Json): string[] {
	const list = job.resultUrls ?? job.result_urls;
	if (Array.isArray(list)) return list.filter((url): url is string => typeof url === 'string' && url !== '');
	const single = firstString(job.resultUrl, job.result_url, job.videoUrl, job.video_url);
	return single ? [single] : [];
}

/** Whether a body can be read as a job record (without a fallback id). */
export function isJobBody(body: unknown): boolean {
	const job = unwrap(body);
	return job !== undefined && firstString(job.id, job.jobId, job.job_id) !== undefined;
}

/** Reads a job record in any spelling the contract lists; throws TransportError if it is none. */
export function parseJob(body: unknown, fallbackId?: string): JobRecord {
	const job = unwrap(body);
	const id = job ? firstString(job.id, job.jobId, job.job_id) ?? fallbackId : undefined;
	if (!job || !id) throw malformed('job record');
	const rawStatus = firstString(job.status, job.state) ?? '';
	const record: JobRecord = {
		id,
		status: normaliseStatus(rawStatus),
		rawStatus,
		resultUrls: resultUrlsOf(job),
	};
	const progress = firstNumber(job.progress);
	if (progress !== undefined) record.progress = Math.min(100, Math.max(0, progress));
	const creditsQueued = firstNumber(job.creditsQueued, job.credits_queued);
	if (creditsQueued !== undefined) record.creditsQueued = creditsQueued;
	const creditsUsed = firstNumber(job.creditsUsed, job.credits_used);
	if (creditsUsed !== undefined) record.creditsUsed = creditsUsed;
	const createdAt = parseTimestamp(job.createdAt ?? job.created_at);
	if (createdAt) record.createdAt = createdAt;
	const completedAt = parseTimestamp(job.completedAt ?? job.completed_at);
	if (completedAt) record.completedAt = completedAt;
	const error = job.error;
	const errorMessage = isObject(error) ? firstString(error.message, error.detail) : firstString(error);
	if (errorMessage) record.error = errorMessage;
	const errorCode = firstString(job.errorCode, job.error_code, isObject(error) ? error.code : undefined);
	if (errorCode) record.errorCode = errorCode;
	const model = firstString(job.model);
	if (model) record.model = model;
	return record;
}

/** Reads the upload ticket, in either field spelling; throws TransportError if unusable. */
export function parseUploadTicket(body: unknown): UploadTicket {
	const ticket = unwrap(body);
	const uploadUrl = ticket && firstString(ticket.uploadUrl, ticket.upload_url, ticket.url);
	const fileUrl = ticket && firstString(ticket.fileUrl, ticket.file_url, ticket.publicUrl, ticket.public_url);
	if (!ticket || !uploadUrl || !fileUrl) throw malformed('upload ticket');
	const headers: Record<string, string> = {};
	if (isObject(ticket.headers)) {
		for (const [name, value] of Object.entries(ticket.headers)) {
			if (typeof value === 'string') headers[name] = value;
		}
	}
	const result: UploadTicket = {
		uploadUrl,
		fileUrl,
		method: (firstString(ticket.method) ?? 'PUT').toUpperCase(),
		headers,
	};
	const expiresAt = parseTimestamp(ticket.expiresAt ?? ticket.expires_at);
	if (expiresAt) result.expiresAt = expiresAt;
	return result;
}

const MAX_TEXT_MESSAGE = 200;

/** message, code and request id from any error body shape the contract lists. */
export function parseErrorBody(body: unknown): { message?: string; code?: string; requestId?: string } {
	if (typeof body === 'string') {
		const text = body.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim();
		return text ? { message: text.length > MAX_TEXT_MESSAGE ? `${text.slice(0, MAX_TEXT_MESSAGE)}…` : text } : {};
	}
	if (!isObject(body)) return {};
	const error = body.error;
	const nested = isObject(error) ? error : {};
	const result: { message?: string; code?: string; requestId?: string } = {};
	const message = firstString(nested.message, typeof error === 'string' ? error : undefined, body.message, body.detail, body.title);
	if (message) result.message = message;
	const code = firstString(nested.code, body.code, body.type);
	if (code) result.code = code;
	const requestId = firstString(nested.requestId, body.requestId, body.request_id);
	if (requestId) result.requestId = requestId;
	return result;
}
