import type { JobRecord, JobStatus, UploadTicket } from './types';
import { TransportError } from './errors';

/*
 * The service's answers, read liberally (docs/api.md#tolerated-spellings): every spelling listed
 * there is accepted, unknown fields are ignored, and only an answer with nothing usable
 * in it is an error. Each alternative below says why it is accepted.
 */

type Json = Record<string, unknown>;

// Only `done` is specified; the others are the words comparable video APIs use for a finished job.
const DONE = new Set(['done', 'succeeded', 'completed', 'complete', 'success', 'successful']);
// `failed` is specified; `error` and `canceled` were decided as failed (docs/api.md#job-states),
// since a cancelled job will never yield a video; the others are their spelling variants.
const FAILED = new Set(['failed', 'failure', 'error', 'errored', 'canceled', 'cancelled']);

/** Epoch values below this are seconds (until the year 5138); above, milliseconds. */
const SECONDS_LIMIT = 1e11;

const MAX_TEXT_MESSAGE = 200;

function isObject(value: unknown): value is Json {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function firstString(...values: unknown[]): string | undefined {
	for (const value of values) if (typeof value === 'string' && value.trim() !== '') return value;
	return undefined;
}

// Numeric strings too: some services send every field as text.
function firstNumber(...values: unknown[]): number | undefined {
	for (const value of values) {
		const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
		if (typeof number === 'number' && Number.isFinite(number)) return number;
	}
	return undefined;
}

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

/**
 * ISO 8601, epoch seconds or epoch milliseconds, to ISO 8601 UTC; anything else to undefined.
 * ISO 8601 is specified; epoch numbers are common in webhook bodies (the signature test vector
 * of docs/api.md#signatures carries milliseconds).
 */
export function parseTimestamp(value: unknown): string | undefined {
	let ms: number | undefined;
	const numeric = firstNumber(value);
	if (value instanceof Date) ms = value.getTime();
	else if (numeric !== undefined) ms = numeric < SECONDS_LIMIT ? numeric * 1000 : numeric;
	else if (typeof value === 'string') {
		const text = value.trim();
		// A date-time without a zone would be read as local time; the spec's times are UTC.
		const zoneless = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(text);
		ms = Date.parse(zoneless ? `${text.replace(' ', 'T')}Z` : text);
	}
	if (ms === undefined || !Number.isFinite(ms)) return undefined;
	const date = new Date(ms);
	// Beyond ±8.64e15 ms the Date is invalid and toISOString would throw.
	return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

function malformed(what: string, jobId?: string): TransportError {
	return new TransportError(
		`The Omni Video API answered, but its ${what} could not be read. Run again; if this keeps happening, the service may have changed its format: contact Omni Video support.`,
		'malformed',
		{ code: 'malformed_response', jobId },
	);
}

/** `id` is specified; `jobId` and `job_id` are what services call it beside other fields. */
function idOf(job: Json): string | undefined {
	const id = firstString(job.id, job.jobId, job.job_id);
	if (id !== undefined) return id.trim();
	// Ids are opaque: a numeric one is read as its text.
	const numeric = [job.id, job.jobId, job.job_id].find(
		(v): v is number => typeof v === 'number' && Number.isFinite(v),
	);
	return numeric === undefined ? undefined : String(numeric);
}

/** The job object itself, whether sent bare or in the `{ data }` or `{ job }` envelope many APIs use. */
function unwrap(body: unknown): Json | undefined {
	if (!isObject(body)) return undefined;
	if (idOf(body) !== undefined || typeof body.status === 'string') return body;
	for (const key of ['data', 'job']) {
		const inner = body[key];
		if (isObject(inner)) return inner;
	}
	return body;
}

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

/** Reads a job record in any listed spelling; throws TransportError if it is none. */
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

/**
 * Reads the upload ticket in any listed spelling; throws TransportError if unusable. The spec
 * does not show this answer (docs/api.md#uploads): `url` and `publicUrl` are the names other
 * pre-signed upload APIs use, and the method defaults to the PUT the spec speaks of.
 */
export function parseUploadTicket(body: unknown): UploadTicket {
	const ticket = unwrap(body);
	const uploadUrl = ticket && firstString(ticket.uploadUrl, ticket.upload_url, ticket.url);
	const fileUrl =
		ticket && firstString(ticket.fileUrl, ticket.file_url, ticket.publicUrl, ticket.public_url);
	if (!ticket || !uploadUrl || !fileUrl) throw malformed('upload ticket');
	const headers: Record<string, string> = {};
	// Only string values can be sent as headers; anything else is dropped.
	if (isObject(ticket.headers)) {
		for (const [name, value] of Object.entries(ticket.headers)) {
			if (typeof value === 'string') headers[name] = value;
		}
	}
	const result: UploadTicket = {
		uploadUrl,
		fileUrl,
		method: (firstString(ticket.method) ?? 'PUT').trim().toUpperCase(),
		headers,
	};
	const expiresAt = parseTimestamp(ticket.expiresAt ?? ticket.expires_at);
	if (expiresAt) result.expiresAt = expiresAt;
	return result;
}

const ENTITIES: Record<string, string> = {
	amp: '&',
	lt: '<',
	gt: '>',
	quot: '"',
	'#39': "'",
	apos: "'",
	nbsp: ' ',
};

/**
 * Visible text of an HTML page: its title or first heading when it has one. Proxies and gateways
 * in front of an API answer errors with pages of their own.
 */
function textOfHtml(html: string): string {
	const pick = (tag: string) =>
		new RegExp(`<${tag}[^>]*>([\\s\\S]*?)</${tag}>`, 'i').exec(html)?.[1];
	const part =
		pick('title') ?? pick('h1') ?? html.replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, ' ');
	return part
		.replace(/<[^>]*>/g, ' ')
		.replace(/&(amp|lt|gt|quot|#39|apos|nbsp);/g, (_m, name: string) => {
			return ENTITIES[name];
		});
}

/** Control characters other than whitespace mean bytes, not words. */
function looksBinary(text: string): boolean {
	for (let i = 0; i < text.length; i++) {
		const code = text.charCodeAt(i);
		if (code < 0x20 && (code < 0x09 || code > 0x0d)) return true;
	}
	return false;
}

/** A short message from a text body; binary or empty bodies give none. */
function messageOfText(text: string): string | undefined {
	if (looksBinary(text)) return undefined;
	const words = (/<[a-z!/][^>]*>/i.test(text) ? textOfHtml(text) : text)
		.replace(/\s+/g, ' ')
		.trim();
	if (words === '') return undefined;
	const chars = [...words];
	return chars.length > MAX_TEXT_MESSAGE
		? `${chars.slice(0, MAX_TEXT_MESSAGE - 1).join('')}…`
		: words;
}

/** A JSON body delivered as text (wrong content type) is still read as JSON. */
function parseJsonText(text: string): unknown {
	const trimmed = text.trim();
	if (!trimmed.startsWith('{')) return undefined;
	try {
		return JSON.parse(trimmed) as unknown;
	} catch {
		return undefined;
	}
}

/**
 * Message, code and request id from any error body. `{ error: { code, message, requestId } }` was
 * decided (docs/api.md#errors); a plain string `error`, flat `message`/`code`, problem details'
 * `detail`/`title`/`type` and lists of errors are the other common API styles.
 */
export function parseErrorBody(body: unknown): {
	message?: string;
	code?: string;
	requestId?: string;
} {
	if (typeof body === 'string') {
		const json = parseJsonText(body);
		if (isObject(json)) return parseErrorBody(json);
		const message = messageOfText(body);
		return message ? { message } : {};
	}
	if (!isObject(body)) return {};
	const error = body.error;
	const nested = isObject(error) ? error : {};
	// JSON:API and GraphQL style: `{ errors: [{ message, code }] }`.
	const listed = Array.isArray(body.errors) && isObject(body.errors[0]) ? body.errors[0] : {};
	const result: { message?: string; code?: string; requestId?: string } = {};
	const message = firstString(
		nested.message,
		typeof error === 'string' ? error : undefined,
		body.message,
		body.detail,
		body.title,
		listed.message,
		listed.detail,
	);
	if (message) result.message = message.trim();
	const code = firstString(nested.code, body.code, body.type, listed.code);
	if (code) result.code = code.trim();
	// Without one here, errorFromResponse falls back to the X-Request-Id header.
	const requestId = firstString(
		nested.requestId,
		nested.request_id,
		body.requestId,
		body.request_id,
	);
	if (requestId) result.requestId = requestId.trim();
	return result;
}
