import { TransportFailure } from '../errors/errors';

/**
 * What core needs from its host: HTTP, time and randomness. Each platform passes its own
 * (n8n helpers and `sleep`, Zapier's `z.request`, a plain Node transport for tools and tests),
 * which keeps core free of timers, globals and imports of any platform.
 */

/** The part of an AbortSignal core uses; declared here so core needs no DOM or Node typings. */
export interface AbortSignalLike {
	readonly aborted: boolean;
	readonly reason?: unknown;
	addEventListener(type: 'abort', listener: () => void): void;
	removeEventListener(type: 'abort', listener: () => void): void;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'HEAD';

export interface HttpRequest {
	method: HttpMethod;
	/** Absolute URL. */
	url: string;
	headers?: Record<string, string>;
	/** JSON-serialisable value (sent as JSON), raw bytes (sent as they are) or a StreamBody. */
	body?: unknown;
	/** Per-request time limit. */
	timeoutMs?: number;
	signal?: AbortSignalLike;
}

/**
 * A body sent as it is read, with its length announced (pre-signed upload URLs need it). Only a
 * host that hands core streams (Zapier's file fields) sends one, and its transport knows `stream`.
 */
export class StreamBody {
	constructor(
		readonly stream: unknown,
		readonly length: number,
		/** The same bytes from their start again (a stream is read once): for following a redirect. */
		readonly reopen?: () => Promise<StreamBody>,
	) {}
}

export interface HttpResponse {
	status: number;
	/** Header names in lower case. */
	headers: Record<string, string>;
	/** Parsed JSON when the body was JSON, else the text, else undefined. */
	body: unknown;
}

/**
 * Sends one request and returns whatever status came back; it throws only when no response
 * arrived, and then a `TransportFailure` (see errors.ts) saying how it failed.
 */
export type SendRequest = (request: HttpRequest) => Promise<HttpResponse>;

export interface Transport {
	/** Requests to the API's own host: the transport adds `Authorization: Bearer <key>`. */
	api: SendRequest;
	/** Requests anywhere else (pre-signed upload URL, CDN): never any credentials. */
	plain: SendRequest;
}

export interface Clock {
	/** Milliseconds since the Unix epoch. */
	now(): number;
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export type Sleep = (ms: number, signal?: AbortSignalLike) => Promise<void>;

/** A number in [0, 1), like Math.random. */
export type Random = () => number;

/** Everything core needs from the host to talk to one API with one key. */
export interface ClientContext {
	/** The API's base address, without a trailing slash, e.g. https://api.example.com. */
	baseUrl: string;
	transport: Transport;
	clock: Clock;
	sleep: Sleep;
	random: Random;
}

/**
 * The most a JSON answer of the API (or of a storage host) may hold. A job record is a few KB;
 * anything this large is a broken or hostile server, and reading it whole would exhaust memory.
 * Transports stop reading past it and throw `responseTooLarge()`. Video downloads are streamed
 * and are not bound by it.
 */
export const MAX_JSON_RESPONSE_BYTES = 1024 * 1024;

export const RESPONSE_TOO_LARGE = 'response_too_large';

/** What a transport throws when an answer passes MAX_JSON_RESPONSE_BYTES. */
export function responseTooLarge(): TransportFailure {
	return new TransportFailure(
		'malformed',
		`the answer is larger than ${MAX_JSON_RESPONSE_BYTES / (1024 * 1024)} MiB`,
		RESPONSE_TOO_LARGE,
	);
}

/**
 * Reads a body stream up to MAX_JSON_RESPONSE_BYTES and stops (leaving the loop destroys the
 * stream) as soon as it holds more, so a huge answer never sits in memory.
 */
export async function readCapped(
	stream: AsyncIterable<Uint8Array>,
	declaredLength?: string | null,
): Promise<Uint8Array[]> {
	if (declaredLength && Number(declaredLength) > MAX_JSON_RESPONSE_BYTES) throw responseTooLarge();
	const chunks: Uint8Array[] = [];
	let size = 0;
	let tooLarge = false;
	let broken: unknown;
	try {
		for await (const chunk of stream) {
			size += chunk.byteLength;
			tooLarge = size > MAX_JSON_RESPONSE_BYTES;
			if (tooLarge) break;
			chunks.push(chunk);
		}
	} catch (error) {
		broken = error;
	}
	// The connection broke in the middle of the body: no usable answer arrived.
	if (broken !== undefined) throw new TransportFailure('reset', broken instanceof Error ? broken.message : String(broken));
	if (tooLarge) throw responseTooLarge();
	return chunks;
}

/** A response body as `HttpResponse.body` holds it: JSON when it parses, else the text, empty → undefined. */
export function bodyFromText(text: string | undefined): unknown {
	if (text === undefined || text === '') return undefined;
	try {
		return JSON.parse(text);
	} catch {
		return text;
	}
}
