import axios, { type AxiosRequestConfig, isAxiosError } from 'axios';
import {
	MAX_JSON_RESPONSE_BYTES,
	bodyFromText,
	responseTooLarge,
	type HttpRequest,
	type HttpResponse,
	type SendRequest,
	type Transport,
} from '../core/transport';
import { TransportFailure, type TransportFailureKind } from '../core/errors';
import { settle } from '../core/settle';

/**
 * The plain Node transport (tests, sandbox tools, demo, bench): axios with every status passed
 * back as a response. The bearer key is added only for URLs on the API's own origin, and axios
 * errors are reduced to a kind and a reason so that no header (the key) can leak through them.
 */
export function createAxiosTransport(options: { baseUrl: string; apiKey: string }): Transport {
	const apiOrigin = new URL(options.baseUrl).origin;
	const plain: SendRequest = (request) => send(request, {});
	const api: SendRequest = (request) => {
		if (new URL(request.url).origin !== apiOrigin) {
			// A bug upstream, never a user error: refuse rather than send the key elsewhere.
			throw new TransportFailure('other', `Refusing to send the API key to ${new URL(request.url).origin}`);
		}
		return send(request, { Authorization: `Bearer ${options.apiKey}` });
	};
	return { api, plain };
}

async function send(request: HttpRequest, authHeaders: Record<string, string>): Promise<HttpResponse> {
	const isBytes = request.body instanceof Uint8Array;
	const config: AxiosRequestConfig = {
		method: request.method,
		url: request.url,
		headers: { ...request.headers, ...authHeaders },
		data: isBytes ? Buffer.from(request.body as Uint8Array) : request.body,
		timeout: request.timeoutMs ?? 30_000,
		signal: request.signal as AbortSignal | undefined,
		responseType: 'text',
		transformResponse: (data: unknown) => data,
		validateStatus: () => true,
		maxRedirects: 0,
		maxBodyLength: Infinity,
		// axios stops reading and destroys the socket past this, so a huge answer is never held.
		maxContentLength: MAX_JSON_RESPONSE_BYTES,
	};
	const sent = await settle(axios.request<string>(config));
	if (!sent.ok) {
		if (/maxContentLength/.test(String((sent.error as Error)?.message))) throw responseTooLarge();
		throw new TransportFailure(failureKind(sent.error), describe(sent.error));
	}
	const response = sent.value;
	return { status: response.status, headers: lowerCaseHeaders(response.headers), body: bodyFromText(response.data) };
}

function lowerCaseHeaders(headers: object): Record<string, string> {
	const out: Record<string, string> = {};
	for (const [name, value] of Object.entries(headers)) {
		if (value !== undefined && value !== null) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
	}
	return out;
}

function failureKind(error: unknown): TransportFailureKind {
	const code = isAxiosError(error) ? error.code : (error as { code?: string } | undefined)?.code;
	switch (code) {
		case 'ECONNREFUSED':
			return 'refused';
		case 'ECONNABORTED':
		case 'ETIMEDOUT':
			return 'timeout';
		case 'ECONNRESET':
		case 'EPIPE':
			return 'reset';
		case 'ERR_CANCELED':
			return 'aborted';
		default:
			return /socket hang up/i.test(String((error as Error)?.message)) ? 'reset' : 'other';
	}
}

/** Only the code and axios's own message: never the config or headers axios attaches. */
function describe(error: unknown): string {
	const code = (error as { code?: string } | undefined)?.code;
	const message = error instanceof Error ? error.message : String(error);
	return code && !message.includes(code) ? `${code}: ${message}` : message;
}
