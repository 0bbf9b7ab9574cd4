import { TransportFailure, type TransportFailureKind } from '../errors/errors';
import { bodyFromText, readCapped, type Sleep, type Transport } from './transport';

/*
 * What every host's transport needs beside its own HTTP client (n8n's helpers, Zapier's
 * z.request, axios for tools and tests): where the key may go, what a failed request was, header
 * names, a body read up to core's cap, and a sleep that stops when asked.
 */

/**
 * The one rule for the API key: it goes to the API's own paths (`<baseUrl>/api/…`) and nowhere
 * else, not to a pre-signed upload URL, a CDN or a file URL, even on the API's host.
 */
export function mayCarryApiKey(url: string | undefined, baseUrl: string): boolean {
	const base = baseUrl.replace(/\/+$/, '');
	if (!url || !base) return false;
	return url.startsWith(`${base}/api/`);
}

/**
 * The transport with its `api` side held to mayCarryApiKey: a URL outside the API is refused
 * before the host sees it. Such a URL is a bug upstream, never a user error.
 */
export function keyOnlyForApi(transport: Transport, baseUrl: string): Transport {
	return {
		plain: transport.plain,
		api: async (request) => {
			if (!mayCarryApiKey(request.url, baseUrl)) {
				const url = new URL(request.url);
				throw new TransportFailure('other', `Refusing to send the API key to ${url.origin}${url.pathname}`);
			}
			return await transport.api(request);
		},
	};
}

interface ClientLibraryError {
	code?: unknown;
	cause?: { code?: unknown };
	type?: unknown;
	name?: unknown;
	message?: unknown;
}

const KIND_OF_CODE = new Map<string, TransportFailureKind>([
	['ECONNREFUSED', 'refused'],
	['ECONNABORTED', 'timeout'],
	['ETIMEDOUT', 'timeout'],
	['ECONNRESET', 'reset'],
	['EPIPE', 'reset'],
	['ERR_CANCELED', 'aborted'],
	// Node's fetch (undici), in the error's cause.
	['UND_ERR_CONNECT_TIMEOUT', 'timeout'],
	['UND_ERR_HEADERS_TIMEOUT', 'timeout'],
	['UND_ERR_SOCKET', 'reset'],
]);

/**
 * How a request of a client library (axios, node-fetch, undici, n8n's helpers) failed, from its
 * error's code, its cause's code (fetch), its type or name (node-fetch), or its message.
 */
export function transportFailureKind(error: unknown): TransportFailureKind {
	const source = (error ?? {}) as ClientLibraryError;
	const byCode = KIND_OF_CODE.get(String(source.code ?? source.cause?.code ?? ''));
	if (byCode) return byCode;
	if (source.type === 'request-timeout') return 'timeout';
	// AbortSignal.timeout() ends a fetch with a TimeoutError; an abort by the caller with an AbortError.
	if (source.name === 'TimeoutError') return 'timeout';
	if (source.name === 'AbortError') return 'aborted';
	return /socket hang up/i.test(String(source.message)) ? 'reset' : 'other';
}

/** A fetch `Headers` (node-fetch's too), as far as reading it goes. */
interface FetchHeaders {
	forEach(callback: (value: string, name: string) => void): void;
}

/** Headers of a response, as a plain object or a fetch `Headers`, with names in lower case. */
export function lowerCaseHeaders(headers: Record<string, unknown> | FetchHeaders | undefined): Record<string, string> {
	const out: Record<string, string> = {};
	if (typeof headers?.forEach === 'function') {
		(headers as FetchHeaders).forEach((value, name) => {
			out[name.toLowerCase()] = value;
		});
		return out;
	}
	for (const [name, value] of Object.entries(headers ?? {})) {
		if (value !== undefined && value !== null) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
	}
	return out;
}

function isStream(body: unknown): body is AsyncIterable<Uint8Array> {
	return typeof (body as AsyncIterable<Uint8Array> | undefined)?.[Symbol.asyncIterator] === 'function';
}

/**
 * A response body as `HttpResponse.body` holds it. A stream is read up to core's cap (see
 * readCapped) so a huge answer is never held whole; bytes and text are parsed as JSON when they
 * are JSON; anything else (a body the client library parsed already) is kept as it is. Every host
 * runs on Node, so the global Buffer decodes UTF-8 across chunk boundaries.
 */
export async function responseBody(body: unknown, declaredLength?: string): Promise<unknown> {
	const bytes = isStream(body) ? Buffer.concat(await readCapped(body, declaredLength)) : body;
	const text = bytes instanceof Uint8Array ? Buffer.from(bytes).toString('utf8') : bytes;
	return typeof text === 'string' ? bodyFromText(text) : text;
}

/**
 * The host's timer, as two functions it hands in (Node's own timer functions, say): core
 * has none of its own and names none (n8n's verification forbids timers in a node package).
 */
export interface Timers<Handle> {
	start(callback: () => void, ms: number): Handle;
	cancel(handle: Handle): void;
}

/** core's Sleep on the host's timers: an abort rejects with the signal's reason and clears the timer. */
export function abortableSleep<Handle>(timers: Timers<Handle>): Sleep {
	return (ms, signal) =>
		new Promise<void>((resolve, reject) => {
			if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
			const onAbort = () => {
				timers.cancel(timer);
				reject(signal?.reason ?? new Error('aborted'));
			};
			const timer = timers.start(() => {
				signal?.removeEventListener('abort', onAbort);
				resolve();
			}, ms);
			signal?.addEventListener('abort', onAbort);
		});
}
