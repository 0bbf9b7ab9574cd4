import { RESPONSE_TOO_LARGE, type ClientContext, type HttpMethod, type HttpResponse, type AbortSignalLike } from './transport';
import type { RateLimiter, RequestPriority } from '../pacing/limiter';
import type { RenderCalibration } from '../pacing/renderCalibration';
import type { EndedJobs } from '../pacing/endedJobs';
import type { MadeJobs } from '../jobs/madeJobs';
import { sleepUnlessCancelled, throwIfAborted } from './cancellation';
import { TransportFailure } from '../errors/errors';
import { settle } from '../settle';
import { errorFromResponse, errorFromTransportFailure, parseRetryAfter, type Operation } from '../errors/httpErrors';
import { parseErrorBody } from '../answers/parseErrorBody';

/** How long, in total, one call keeps retrying what is safe to retry before giving up. */
export const DEFAULT_RETRY_BUDGET_MS = 10 * 60_000;
const MAX_SAFE_RETRIES = 4;
const BACKOFF_BASE_MS = 1_000;
const DEFAULT_RATE_LIMIT_WAIT_MS = 5_000;
const MIN_RATE_LIMIT_WAIT_MS = 1_000;
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** Below this, a request is not worth starting before a deadline: it could not get its answer. */
const MIN_REQUEST_TIME_MS = 250;

export interface ApiCall {
	operation: Operation;
	method: HttpMethod;
	/** Path under the base URL, starting with `/`. */
	path: string;
	body?: unknown;
	headers?: Record<string, string>;
	jobId?: string;
	/** Set on creates: makes the call "unsafe", never retried once it may have reached the service. */
	idempotencyKey?: string;
	signal?: AbortSignalLike;
	/**
	 * The signal stops the call only while it waits for its turn: a request once sent runs to its
	 * answer (a host whose caller went away still learns which job a create made).
	 */
	finishOnceSent?: boolean;
	/** Retries of 429s and refused connections stop when this much time has passed. */
	retryBudgetMs?: number;
	/**
	 * Absolute time on the host's clock by which the call must have its answer (a host's budget:
	 * Zapier's 30 s step, the 15 s a callback is given). Nothing waits past it: a call that cannot
	 * start in time fails at once with a RateLimitError carrying the delay, and the request's own
	 * timeout shrinks to what remains.
	 */
	deadlineAtMs?: number;
	/** `urgent` goes ahead of bulk work on the key (confirming a callback). */
	priority?: RequestPriority;
	/**
	 * A create that waits for its place among the plan's jobs itself: a 429 concurrency_limited
	 * (once the limiter has learned from it) is returned rather than retried here, so that the
	 * create queues for a place again instead of retrying past the others waiting for one.
	 */
	returnConcurrencyRefusal?: boolean;
}

/** Everything a call needs: the host's transport and time, and the key's shared limiter. */
export interface ApiRuntime extends ClientContext {
	limiter: RateLimiter;
	/** How this key's jobs really take compared with their estimates (see RenderCalibration). */
	calibration: RenderCalibration;
	/** Jobs of this key seen ended in this process (see EndedJobs). */
	endedJobs: EndedJobs;
	/** Jobs this process's creates made, by idempotency key (see MadeJobs). */
	madeJobs: MadeJobs;
}

/** What to do after one attempt that got no 2xx: wait and try again, or give up with an error. */
type NextStep = { retryAfterMs: number } | { fail: Error };

/**
 * Sends one API call inside the plan's limits and applies the retry rules of the API:
 * 429 waits for Retry-After and a refused connection backs off (neither created anything);
 * a lookup also survives 5xx, timeouts and resets; a create whose outcome is unknown is never
 * resent (its error names the idempotency key instead).
 */
export async function callApi(runtime: ApiRuntime, call: ApiCall): Promise<HttpResponse> {
	const { clock, limiter } = runtime;
	const giveUpAt = Math.min(clock.now() + (call.retryBudgetMs ?? DEFAULT_RETRY_BUDGET_MS), call.deadlineAtMs ?? Infinity);
	const headers: Record<string, string> = { Accept: 'application/json', ...call.headers };
	if (call.body !== undefined) headers['Content-Type'] = 'application/json';
	if (call.idempotencyKey !== undefined) headers['Idempotency-Key'] = call.idempotencyKey;

	for (let attempt = 0; ; attempt++) {
		throwIfAborted(call.signal, 'The request', call.jobId);
		const turnDeadline = call.deadlineAtMs === undefined ? undefined : call.deadlineAtMs - MIN_REQUEST_TIME_MS;
		await limiter.acquireRequest({ signal: call.signal, deadlineAtMs: turnDeadline, priority: call.priority });
		const timeoutMs = Math.min(DEFAULT_REQUEST_TIMEOUT_MS, (call.deadlineAtMs ?? Infinity) - clock.now());
		const sent = await settle(
			runtime.transport.api({
				method: call.method,
				url: runtime.baseUrl + call.path,
				headers,
				body: call.body,
				timeoutMs: Math.max(MIN_REQUEST_TIME_MS, timeoutMs),
				signal: call.finishOnceSent ? undefined : call.signal,
			}),
		);
		let next: NextStep;
		if (sent.ok) {
			limiter.observeHeaders(sent.value.headers);
			if (sent.value.status >= 200 && sent.value.status < 300) return sent.value;
			next = afterResponse(runtime, call, sent.value, attempt);
			if (call.returnConcurrencyRefusal && isConcurrencyRefusal(sent.value)) return sent.value;
		} else {
			next = afterNoResponse(runtime, call, sent.error, attempt);
		}
		if ('fail' in next) throw next.fail;
		if (clock.now() + next.retryAfterMs >= giveUpAt) {
			// The wait would run past the call's budget: the error says how long (a 429's Retry-After).
			throw sent.ok
				? errorFromResponse(sent.value, errorContext(runtime, call))
				: afterNoResponseError(runtime, call, sent.error);
		}
		if (next.retryAfterMs > 0) {
			await sleepUnlessCancelled(runtime.sleep, next.retryAfterMs, call.signal, 'The request', call.jobId);
		}
	}
}

function errorContext(runtime: ApiRuntime, call: ApiCall) {
	return {
		operation: call.operation,
		nowMs: runtime.clock.now(),
		jobId: call.jobId,
		idempotencyKey: call.idempotencyKey,
	};
}

/**
 * The service's answer to a create over the plan's jobs at once: `concurrency_limited`, or a 429
 * that does not say which limit it is (the spec shows no 429 body), which may be.
 */
export function isConcurrencyRefusal(response: HttpResponse): boolean {
	return response.status === 429 && parseErrorBody(response.body).code !== 'rate_limited';
}

function backoffMs(runtime: ApiRuntime, attempt: number): number {
	return BACKOFF_BASE_MS * 2 ** attempt * (0.5 + runtime.random());
}

/** The retry rules for an answer that is not a 2xx. */
function afterResponse(runtime: ApiRuntime, call: ApiCall, response: HttpResponse, attempt: number): NextStep {
	const isCreate = call.idempotencyKey !== undefined;
	if (response.status === 429) {
		const told = parseRetryAfter(response.headers['retry-after'], runtime.clock.now());
		const waitMs = Math.max(MIN_RATE_LIMIT_WAIT_MS, told ?? DEFAULT_RATE_LIMIT_WAIT_MS);
		// Too many jobs at once holds back new jobs only; lookups and uploads go on. A create's 429
		// that does not say which limit it is may be either: both are held back.
		const code = parseErrorBody(response.body).code;
		if (isCreate && code !== 'rate_limited') runtime.limiter.concurrencyRefused(waitMs, told !== undefined);
		if (code !== 'concurrency_limited') runtime.limiter.pause(waitMs);
		return { retryAfterMs: waitMs };
	}
	const retry = attempt < MAX_SAFE_RETRIES;
	// The same idempotency key is still being processed: the original request will finish,
	// and asking again with the same key is safe.
	if (retry && response.status === 409 && parseErrorBody(response.body).code === 'idempotency_conflict') {
		return { retryAfterMs: backoffMs(runtime, attempt) };
	}
	if (retry && response.status >= 500 && !isCreate) return { retryAfterMs: backoffMs(runtime, attempt) };
	return { fail: errorFromResponse(response, errorContext(runtime, call)) };
}

/** The retry rules when no answer came: only what cannot have created anything is retried. */
function afterNoResponse(runtime: ApiRuntime, call: ApiCall, failure: unknown, attempt: number): NextStep {
	if (call.signal?.aborted && call.idempotencyKey === undefined) {
		throwIfAborted(call.signal, 'The request', call.jobId);
	}
	if (!(failure instanceof TransportFailure) && !call.signal?.aborted) return { fail: asError(failure) };
	const kind = failure instanceof TransportFailure ? failure.failure : 'aborted';
	// An oversized answer will be as large the next time.
	const tooLarge = failure instanceof TransportFailure && failure.code === RESPONSE_TOO_LARGE;
	const retryable = kind === 'refused' || (call.idempotencyKey === undefined && kind !== 'aborted' && !tooLarge);
	if (retryable && attempt < MAX_SAFE_RETRIES) return { retryAfterMs: backoffMs(runtime, attempt) };
	return { fail: afterNoResponseError(runtime, call, failure) };
}

/**
 * A create cancelled once sent may have created (and charged) a job: it is reported as a request
 * without an answer, whose error names the idempotency key, never as a plain cancel.
 */
function afterNoResponseError(runtime: ApiRuntime, call: ApiCall, failure: unknown): Error {
	const transportFailure =
		failure instanceof TransportFailure ? failure : new TransportFailure('aborted', 'cancelled after it was sent');
	return errorFromTransportFailure(transportFailure, errorContext(runtime, call));
}

function asError(value: unknown): Error {
	return value instanceof Error ? value : new Error(String(value));
}
