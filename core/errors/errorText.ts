import type { ErrorDetails } from './errors';

/*
 * The words of every error message: "<what happened> (<status> <code>, request <id>). <what to
 * do>." Only response headers are read here: request headers (and with them the API key) never
 * reach an error.
 */

/** Which call failed: it decides what the message tells the user to do. */
export type Operation =
	| 'generate'
	| 'getJob'
	| 'upload'
	| 'uploadPut'
	| 'download'
	| 'credentialTest';

export interface ErrorContext {
	operation: Operation;
	nowMs: number;
	jobId?: string;
	idempotencyKey?: string;
}

const MAX_QUOTED_CHARS = 200;

/** Retry-After in seconds or as an HTTP date, as milliseconds from now (never negative). */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
	if (typeof value !== 'string') return undefined;
	const text = value.trim();
	if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
	// An HTTP date names a weekday and a month; Date.parse alone would read "-5" as a year.
	if (!/[a-z]/i.test(text)) return undefined;
	const date = Date.parse(text);
	return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

export function header(headers: Record<string, string> | undefined, name: string): string | undefined {
	if (!headers) return undefined;
	if (headers[name] !== undefined) return headers[name];
	// Transports should lower-case names; one that does not must not lose the request id.
	const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
	return key === undefined ? undefined : headers[key];
}

/** The rate window's reset, for a 429 that came without Retry-After. */
export function resetDelayMs(value: string | undefined, nowMs: number): number | undefined {
	if (value === undefined || !/^\d+(\.\d+)?$/.test(value.trim())) return undefined;
	const number = Number(value);
	// Decided as Unix seconds (docs/api.md#headers); small values can only be a delay in seconds.
	return number > 1e9 ? Math.max(0, Math.round(number * 1000 - nowMs)) : Math.round(number * 1000);
}

/** Text from the service made safe to show: one line, short, never a credential it echoed. */
export function cleanText(text: string | undefined): string {
	if (text === undefined) return '';
	const clean = text
		.replace(/\b(Bearer|Basic)\s+\S+/gi, '$1 [redacted]')
		.replace(/\s+/g, ' ')
		.trim()
		.replace(/[.\s]+$/, '');
	const chars = [...clean];
	return chars.length > MAX_QUOTED_CHARS
		? `${chars.slice(0, MAX_QUOTED_CHARS - 1).join('')}…`
		: clean;
}

/** The service's own words, ready to follow what happened. */
export function quote(text: string | undefined): string {
	const clean = cleanText(text);
	return clean === '' ? '' : `: ${clean}`;
}

export function reference(
	status: number,
	code: string | undefined,
	requestId: string | undefined,
): string {
	const parts = code ? `${status} ${code}` : String(status);
	return requestId ? `(${parts}, request ${requestId})` : `(${parts})`;
}

/** The request in the user's words, with the job id whenever it is known. */
export function action(context: ErrorContext): string {
	const { jobId } = context;
	const forJob = jobId ? ` for job ${jobId}` : '';
	switch (context.operation) {
		case 'generate':
			return `create the video job${forJob}`;
		case 'getJob':
			return jobId ? `look up job ${jobId}` : 'look up the job';
		case 'upload':
			return `prepare the file upload${forJob}`;
		case 'uploadPut':
			return `upload the file to storage${forJob}`;
		case 'download':
			return jobId ? `download the video of job ${jobId}` : 'download the video';
		case 'credentialTest':
			return `check the API key${forJob}`;
	}
}

/** Who answered: uploads and downloads go to storage hosts, not to the API. */
export function host(context: ErrorContext): string {
	if (context.operation === 'uploadPut') return 'the storage service';
	if (context.operation === 'download') return 'the video host';
	return 'the Omni Video API';
}

export function capitalised(text: string): string {
	return text.charAt(0).toUpperCase() + text.slice(1);
}

/** For a create that may have reached the service: how to avoid paying twice. */
export function createOutcomeAdvice(context: ErrorContext): string {
	const rerun = context.idempotencyKey
		? `; rerunning with the same idempotency key ${context.idempotencyKey} is safe where the service honours it`
		: ', so that the video is not paid for twice';
	return `The job may or may not have been created. Before running again, check your Omni Video dashboard${rerun}.`;
}

export function sentence(happened: string, ref: string, advice: string): string {
	return advice === '' ? `${happened} ${ref}.` : `${happened} ${ref}. ${advice}`;
}


/** Everything a rule needs to word an error for one answer. */
export interface AnswerFacts {
	status: number;
	code?: string;
	/** The service's own message, if any. */
	message?: string;
	context: ErrorContext;
	/** "(status code, request id)" */
	ref: string;
	/** ": <the service's words>" or nothing. */
	said: string;
	/** The request in the user's words. */
	act: string;
	details: ErrorDetails;
	headers: Record<string, string>;
}
