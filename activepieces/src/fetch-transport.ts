/* eslint-disable @n8n/community-nodes/require-node-api-error -- the Activepieces piece: n8n's rules for community nodes do not apply to it */
import {
	TransportFailure,
	lowerCaseHeaders,
	responseBody,
	transportFailureKind,
	type HttpRequest,
	type HttpResponse,
	type Transport,
} from '../../core';

/**
 * core's transport on Node's own fetch. The piece does not use pieces-common's httpClient: it
 * turns every status of 400 and up into an exception, logs failed requests, follows redirects and
 * reads whole answers, where core needs every status back, no redirects and answers cut at its cap.
 * Which URLs get the key is core's rule (the client refuses any other before it reaches here).
 */
export function fetchTransport(options: { apiKey: string }): Transport {
	return {
		api: (request) => send(request, { Authorization: `Bearer ${options.apiKey}` }),
		plain: (request) => send(request, {}),
	};
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
async function send(request: HttpRequest, authHeaders: Record<string, string>): Promise<HttpResponse> {
	const headers = lowerCaseHeaders(request.headers);
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
		throw new TransportFailure(transportFailureKind(error), failureMessage(error));
	}
	const responseHeaders = lowerCaseHeaders(response.headers);
	return { status: response.status, headers: responseHeaders, body: await responseBody(response.body ?? undefined, responseHeaders['content-length']) };
}
