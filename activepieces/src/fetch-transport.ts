/* eslint-disable @n8n/community-nodes/require-node-api-error -- the Activepieces piece: n8n's rules for community nodes do not apply to it */
import {
	TransportFailure,
	bodyFromText,
	readCapped,
	type HttpRequest,
	type HttpResponse,
	type SendRequest,
	type Transport,
	type TransportFailureKind,
} from '../../core';

/**
 * core's transport on Node's own fetch. The piece does not use pieces-common's httpClient: it
 * turns every status of 400 and up into an exception, logs failed requests, follows redirects and
 * reads whole answers, where core needs every status back, no redirects and answers cut at its cap.
 */
export function fetchTransport(options: { baseUrl: string; apiKey: string }): Transport {
	const api: SendRequest = (request) => {
		// The key goes to the API's own /api/ paths only: a bug upstream, never a user error.
		if (!request.url.startsWith(`${options.baseUrl}/api/`)) {
			throw new TransportFailure('other', `Refusing to send the API key to ${new URL(request.url).origin}`);
		}
		return send(request, { Authorization: `Bearer ${options.apiKey}` });
	};
	return { api, plain: (request) => send(request, {}) };
}

function failureKind(error: unknown): TransportFailureKind {
	const source = error as { name?: string; code?: string; cause?: { code?: string } };
	if (source?.name === 'TimeoutError') return 'timeout';
	if (source?.name === 'AbortError') return 'aborted';
	const code = source?.cause?.code ?? source?.code;
	if (code === 'ECONNREFUSED') return 'refused';
	if (code === 'ETIMEDOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT') return 'timeout';
	if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET') return 'reset';
	return 'other';
}

/** Only a kind and the cause's own words: never the request, whose headers hold the key. */
function failureMessage(error: unknown): string {
	const source = error as { message?: string; cause?: { message?: string } };
	return [source?.message, source?.cause?.message].filter(Boolean).join(': ') || String(error);
}

/** A JSON value goes as JSON; bytes (an upload) as they are. */
function requestBody(request: HttpRequest, headers: Record<string, string>): string | Uint8Array | undefined {
	if (request.body === undefined) return undefined;
	if (request.body instanceof Uint8Array) return request.body;
	headers['content-type'] ??= 'application/json';
	return JSON.stringify(request.body);
}

/** Sends one request, returning whatever status came back; throws TransportFailure when none did. */
export async function send(request: HttpRequest, authHeaders: Record<string, string>): Promise<HttpResponse> {
	const headers: Record<string, string> = {};
	for (const [name, value] of Object.entries(request.headers ?? {})) headers[name.toLowerCase()] = value;
	const signals = [request.signal as AbortSignal | undefined, request.timeoutMs ? AbortSignal.timeout(request.timeoutMs) : undefined];
	const active = signals.filter((signal): signal is AbortSignal => signal !== undefined);
	const body = requestBody(request, headers);
	let response: Response;
	try {
		response = await fetch(request.url, {
			method: request.method,
			headers: { ...headers, ...authHeaders },
			body: body as RequestInit['body'],
			redirect: 'manual',
			signal: active.length > 0 ? AbortSignal.any(active) : undefined,
		});
	} catch (error) {
		throw new TransportFailure(failureKind(error), failureMessage(error));
	}
	const responseHeaders: Record<string, string> = {};
	response.headers.forEach((value, name) => (responseHeaders[name.toLowerCase()] = value));
	const chunks = response.body ? await readCapped(response.body as unknown as AsyncIterable<Uint8Array>, responseHeaders['content-length']) : [];
	return { status: response.status, headers: responseHeaders, body: bodyFromText(Buffer.concat(chunks).toString('utf8')) };
}
