/**
 * One small error family for everything core reports. Every error carries what a user or a
 * support ticket needs (status, code, request id, job id, idempotency key) and never the API key:
 * core never sees the key, and transports must not put request headers into what they throw.
 */

export type OmniVideoErrorKind =
	| 'validation'
	| 'auth'
	| 'credits'
	| 'rate_limit'
	| 'not_found'
	| 'job_failed'
	| 'timeout'
	| 'transport'
	| 'service';

export interface ErrorDetails {
	status?: number;
	code?: string;
	requestId?: string;
	jobId?: string;
	idempotencyKey?: string;
	/** A hint for the user on what to do next. */
	hint?: string;
}

export abstract class OmniVideoError extends Error {
	abstract readonly kind: OmniVideoErrorKind;
	readonly status?: number;
	readonly code?: string;
	readonly requestId?: string;
	readonly jobId?: string;
	readonly idempotencyKey?: string;
	readonly hint?: string;

	constructor(message: string, details: ErrorDetails = {}) {
		super(message);
		this.name = new.target.name;
		this.status = details.status;
		this.code = details.code;
		this.requestId = details.requestId;
		this.jobId = details.jobId;
		this.idempotencyKey = details.idempotencyKey;
		this.hint = details.hint;
	}

	/** Plain data for output items and logs: the same fields, nothing else. */
	toJSON(): Record<string, unknown> {
		const out: Record<string, unknown> = { name: this.name, kind: this.kind, message: this.message };
		for (const key of ['status', 'code', 'requestId', 'jobId', 'idempotencyKey', 'hint'] as const) {
			if (this[key] !== undefined) out[key] = this[key];
		}
		return out;
	}
}

/** One thing wrong with the user's input. */
export interface FieldProblem {
	field: string;
	/** The value given, as given. */
	value: unknown;
	message: string;
}

/** The request was refused (before sending, or by the service with 400/413/422). */
export class ValidationError extends OmniVideoError {
	readonly kind = 'validation';
	readonly problems: FieldProblem[];
	constructor(message: string, problems: FieldProblem[] = [], details: ErrorDetails = {}) {
		super(message, details);
		this.problems = problems;
	}
	toJSON(): Record<string, unknown> {
		return { ...super.toJSON(), problems: this.problems };
	}
}

/** 401 (bad, unknown or revoked key) or 403 (plan without API access). */
export class AuthError extends OmniVideoError {
	readonly kind = 'auth';
}

/** 402: the key's budget or the account cannot cover the job. Never retried. */
export class CreditsError extends OmniVideoError {
	readonly kind = 'credits';
}

/** 429: over a rate window or the concurrency limit, to be retried after `retryAfterMs`. */
export class RateLimitError extends OmniVideoError {
	readonly kind = 'rate_limit';
	readonly retryAfterMs?: number;
	constructor(message: string, details: ErrorDetails & { retryAfterMs?: number } = {}) {
		super(message, details);
		this.retryAfterMs = details.retryAfterMs;
	}
	toJSON(): Record<string, unknown> {
		return { ...super.toJSON(), retryAfterMs: this.retryAfterMs };
	}
}

/** 404: no such job for this key's account. */
export class NotFoundError extends OmniVideoError {
	readonly kind = 'not_found';
}

/** The job reached `failed`; `reason` is the service's text. */
export class JobFailedError extends OmniVideoError {
	readonly kind = 'job_failed';
	readonly reason: string;
	constructor(message: string, reason: string, details: ErrorDetails = {}) {
		super(message, details);
		this.reason = reason;
	}
	toJSON(): Record<string, unknown> {
		return { ...super.toJSON(), reason: this.reason };
	}
}

/** A wait or a request ran past its deadline, or was cancelled. The job id says what to look up. */
export class TimeoutError extends OmniVideoError {
	readonly kind = 'timeout';
}

/** How a request failed when no HTTP response arrived. */
export type TransportFailureKind = 'refused' | 'timeout' | 'reset' | 'aborted' | 'malformed' | 'other';

/**
 * No usable response: connection refused, reset, timed out, or a body that could not be read.
 * `outcomeUnknown` is true when the request may have reached the service.
 */
export class TransportError extends OmniVideoError {
	readonly kind = 'transport';
	readonly failure: TransportFailureKind;
	constructor(message: string, failure: TransportFailureKind, details: ErrorDetails = {}) {
		super(message, details);
		this.failure = failure;
	}
	/** Only a refused connection proves the request never reached the service. */
	get outcomeUnknown(): boolean {
		return this.failure !== 'refused';
	}
	toJSON(): Record<string, unknown> {
		return { ...super.toJSON(), failure: this.failure };
	}
}

/** 5xx, 409 and any status docs/api.md#errors does not name. */
export class ServiceError extends OmniVideoError {
	readonly kind = 'service';
}

/**
 * What a transport throws when no response arrived. Transports build it from their own error
 * (axios, n8n, Zapier) with only a kind and a short reason, never the request's headers.
 */
export class TransportFailure extends Error {
	constructor(
		readonly failure: TransportFailureKind,
		message: string,
		/** A finer reason where one helps the user, e.g. `response_too_large`. */
		readonly code?: string,
	) {
		super(message);
		this.name = 'TransportFailure';
	}
}

export function isOmniVideoError(value: unknown): value is OmniVideoError {
	return value instanceof OmniVideoError;
}

/**
 * What an error's message does not say already: core's messages mostly end with their hint and
 * often name their job, and a host that shows the hint or the ids beside the message (n8n's
 * description, a Zap's or a flow's error line) would otherwise say them twice.
 */
export function unsaidDetails(error: OmniVideoError): { hint?: string; jobId?: string; requestId?: string } {
	const unsaid = (text: string | undefined) => (text && !error.message.includes(text) ? text : undefined);
	return { hint: unsaid(error.hint), jobId: unsaid(error.jobId), requestId: unsaid(error.requestId) };
}
