import { StreamBody, type HttpRequest, type HttpResponse, type SendRequest } from './transport';

/** Storage and CDN hosts redirect to a region or a mirror once or twice; more is a loop. */
export const MAX_PLAIN_REDIRECTS = 5;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Headers that may carry a credential, never sent on to where a redirect points. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);

/**
 * A request to a storage or CDN host (never the API: API requests follow no redirect), following
 * at most MAX_PLAIN_REDIRECTS redirects. 307 and 308 repeat the same method with the same bytes,
 * as does 301/302 for anything but POST; 303 asks for a GET of the new address. Transports send
 * these without the key, and any credential header is dropped on the way.
 */
export async function sendPlain(send: SendRequest, request: HttpRequest): Promise<HttpResponse> {
	let current: HttpRequest = { ...request, headers: withoutCredentials(request.headers) };
	for (let hop = 0; ; hop++) {
		const response = await send(current);
		const location = response.headers.location;
		if (!REDIRECT_STATUSES.has(response.status) || !location || hop >= MAX_PLAIN_REDIRECTS) return response;
		const url = new URL(location, current.url).toString();
		const asGet = response.status === 303 || ((response.status === 301 || response.status === 302) && current.method === 'POST');
		if (asGet) {
			current = { ...current, url, method: 'GET', body: undefined, headers: withoutBodyHeaders(current.headers) };
		} else if (current.body instanceof StreamBody) {
			// A stream was read by the first hop: follow only when its source can give it again.
			if (!current.body.reopen) return response;
			current = { ...current, url, body: await current.body.reopen() };
		} else {
			current = { ...current, url };
		}
	}
}

function withoutCredentials(headers: Record<string, string> | undefined): Record<string, string> {
	return Object.fromEntries(Object.entries(headers ?? {}).filter(([name]) => !CREDENTIAL_HEADERS.has(name.toLowerCase())));
}

function withoutBodyHeaders(headers: Record<string, string> | undefined): Record<string, string> {
	return Object.fromEntries(Object.entries(headers ?? {}).filter(([name]) => !/^content-/i.test(name)));
}
