import type { ClientContext, HttpMethod, HttpResponse, AbortSignalLike } from './transport';
import type { RateLimiter } from './limiter';
import { sleepUnlessCancelled, throwIfAborted } from './cancellation';
import { TransportFailure } from './errors';
import { settle } from './settle';
import { errorFromResponse, errorFromTransportFailure, parseRetryAfter, type Operation } from './httpErrors';
import { parseErrorBody } from './parse';

/** How long, in total, one call keeps retrying what is safe to retry before giving up. */
export const DEFAULT_RETRY_BUDGET_MS = 10 * 60_000;
const MAX_SAFE_RETRIES = 4;
const BACKOFF_BASE_MS = 1_000;
const DEFAULT_RATE_LIMIT_WAIT_MS = 5_000;
const MIN_RATE_LIMIT_WAIT_MS = 1_000;
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

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
	/** Retries of 429s and refused connections stop when this much time has passed. */
	retryBudgetMs?: number;
}

/** Everything a call needs: the host's transport and time, and the key's shared limiter. */
export interface ApiRuntime extends ClientContext {
	limiter: RateLimiter;
}

/**
 * Sends one API call inside the plan's limits and applies the retry rules of the contract:
 * 429 waits for Retry-After and a refused connection backs off (neither created anything);
 * a lookup also survives 5xx, timeouts and resets; a create whose outcome is unknown is never
 * resent (its error names the idempotency key instead).
 */
export async function callApi(runtime: ApiRuntime, call: ApiCall): Promise<HttpResponse> {
	const { clock, limiter, sleep, random } = runtime;
	const isCreate = call.idempotencyKey !== undefined;
	const giveUpAt = clock.now() + (call.retryBudgetMs ?? DEFAULT_RETRY_BUDGET_MS);
	const context = () => ({
		operation: call.operation,
		nowMs: clock.now(),
		jobId: call.jobId,
		idempotencyKey: call.idempotencyKey,
	});
	const headers: Record<string, string> = { Accept: 'application/json', ...call.headers };
	if (call.body !== undefined) headers['Content-Type'] = 'application/json';
	if (isCreate) headers['Idempotency-Key'] = call.idempotencyKey as string;

	for (let attempt = 0; ; attempt++) {
		throwIfAborted(call.signal, 'The request', call.jobId);
		await limiter.acquireRequest(call.signal);
		const backoff = () => BACKOFF_BASE_MS * 2 ** attempt * (0.5 + random());
		const sent = await settle(
			runtime.transport.api({
				method: call.method,
				url: runtime.baseUrl + call.path,
				headers,
				body: call.body,
				timeoutMs: DEFAULT_REQUEST_TIMEOUT_MS,
				signal: call.signal,
			}),
		);
		if (!sent.ok) {
			const failure = sent.error;
			if (!(failure instanceof TransportFailure)) throw failure;
			throwIfAborted(call.signal, 'The request', call.jobId);
			const retryable = failure.failure === 'refused' || (!isCreate && failure.failure !== 'aborted');
			const wait = backoff();
			if (retryable && attempt < MAX_SAFE_RETRIES && clock.now() + wait < giveUpAt) {
				await sleepUnlessCancelled(sleep, wait, call.signal, 'The request', call.jobId);
				continue;
			}
			throw errorFromTransportFailure(failure, context());
		}
		const response: HttpResponse = sent.value;
		limiter.observeHeaders(response.headers);
		if (response.status >= 200 && response.status < 300) return response;

		if (response.status === 429) {
			const waitMs = Math.max(
				MIN_RATE_LIMIT_WAIT_MS,
				parseRetryAfter(response.headers['retry-after'], clock.now()) ?? DEFAULT_RATE_LIMIT_WAIT_MS,
			);
			limiter.pause(waitMs);
			if (clock.now() + waitMs < giveUpAt) continue;
			throw errorFromResponse(response, context());
		}
		// The same idempotency key is still being processed: the original request will finish,
		// and asking again with the same key is safe.
		const code = parseErrorBody(response.body).code;
		if (response.status === 409 && code === 'idempotency_conflict' && attempt < MAX_SAFE_RETRIES) {
			await sleepUnlessCancelled(sleep, backoff(), call.signal, 'The request', call.jobId);
			continue;
		}
		if (response.status >= 500 && !isCreate && attempt < MAX_SAFE_RETRIES) {
			const wait = backoff();
			if (clock.now() + wait < giveUpAt) {
				await sleepUnlessCancelled(sleep, wait, call.signal, 'The request', call.jobId);
				continue;
			}
		}
		throw errorFromResponse(response, context());
	}
}
