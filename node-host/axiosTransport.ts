import axios, { type AxiosRequestConfig } from 'axios';
import {
	MAX_JSON_RESPONSE_BYTES,
	bodyFromText,
	responseTooLarge,
	type HttpRequest,
	type HttpResponse,
	type Transport,
} from '../core/http/transport';
import { TransportFailure } from '../core/errors/errors';
import { lowerCaseHeaders, transportFailureKind } from '../core/http/hostKit';
import { settle } from '../core/settle';

/**
 * The plain Node transport (tests, sandbox tools, demo, bench): axios with every status passed
 * back as a response. The bearer key goes on the `api` side only (core's client holds that side
 * to the API's own URLs, see mayCarryApiKey), and axios errors are reduced to a kind and a reason
 * so that no header (the key) can leak through them.
 */
export function createAxiosTransport(options: { apiKey: string }): Transport {
	return {
		api: (request) => send(request, { Authorization: `Bearer ${options.apiKey}` }),
		plain: (request) => send(request, {}),
	};
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
		throw new TransportFailure(transportFailureKind(sent.error), describe(sent.error));
	}
	const response = sent.value;
	return { status: response.status, headers: lowerCaseHeaders(response.headers), body: bodyFromText(response.data) };
}

/** Only the code and axios's own message: never the config or headers axios attaches. */
function describe(error: unknown): string {
	const code = (error as { code?: string } | undefined)?.code;
	const message = error instanceof Error ? error.message : String(error);
	return code && !message.includes(code) ? `${code}: ${message}` : message;
}
