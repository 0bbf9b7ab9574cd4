import { TransportFailure, lowerCaseHeaders, responseBody, transportFailureKind, type HttpRequest, type HttpResponse, type Transport } from '../../core';
import { apiOutcome, metrics } from './telemetry/metrics';

/**
 * core's transport on Node's fetch: every status comes back as an answer (core decides what is an
 * error), redirects are not followed, and answers are read no further than core's cap. The key is
 * added on the `api` side only; core's client sends nothing but the API's own URLs that way.
 */
export function fetchTransport(apiKey: string): Transport {
	return {
		api: (request) => counted(sendRequest(request, { authorization: `Bearer ${apiKey}` })),
		plain: (request) => sendRequest(request, {}),
	};
}

/** An API request counted by how it ended (the plan counts these; the files' URLs on the plain side it does not). */
async function counted(sending: Promise<HttpResponse>): Promise<HttpResponse> {
	try {
		const response = await sending;
		metrics.apiRequest(apiOutcome(response.status));
		return response;
	} catch (error) {
		metrics.apiRequest(error instanceof TransportFailure && error.failure === 'aborted' ? 'cancelled' : 'transport_error');
		throw error;
	}
}

async function sendRequest(request: HttpRequest, auth: Record<string, string>): Promise<HttpResponse> {
	const headers = lowerCaseHeaders(request.headers);
	let body: string | Uint8Array | undefined;
	if (request.body instanceof Uint8Array) body = request.body;
	else if (request.body !== undefined) {
		headers['content-type'] ??= 'application/json';
		body = JSON.stringify(request.body);
	}
	const signals = [request.signal as AbortSignal | undefined, request.timeoutMs ? AbortSignal.timeout(request.timeoutMs) : undefined].filter(
		(signal): signal is AbortSignal => signal !== undefined,
	);
	let response: Response;
	try {
		response = await fetch(request.url, { method: request.method, headers: { ...headers, ...auth }, body: body as RequestInit['body'], redirect: 'manual', signal: signals.length > 0 ? AbortSignal.any(signals) : undefined });
	} catch (error) {
		// Only the cause's words: fetch's error never carries the request, but say nothing of it anyway.
		const cause = (error as { cause?: { message?: string } })?.cause?.message;
		throw new TransportFailure(transportFailureKind(error), [(error as Error)?.message, cause].filter(Boolean).join(': '));
	}
	const answerHeaders = lowerCaseHeaders(response.headers);
	return { status: response.status, headers: answerHeaders, body: await responseBody(response.body ?? undefined, answerHeaders['content-length']) };
}
