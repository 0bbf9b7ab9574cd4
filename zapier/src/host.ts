import type { BeforeRequestMiddleware, Bundle, ZObject } from 'zapier-platform-core';
import {
	StreamBody,
	TransportFailure,
	abortableSleep,
	createOmniVideoClient,
	isLocalSandbox,
	keyFingerprint,
	lowerCaseHeaders,
	mayCarryApiKey,
	planLimits,
	responseBody,
	transportFailureKind,
	MAX_PLAIN_REDIRECTS,
	type HttpRequest,
	type HttpResponse,
	type OmniVideoClient,
	type Transport,
} from '../../core';
import { baseUrlProblem, connectionBaseUrl } from './connection';

/**
 * Marks a request that must go out without the key (upload URL, CDN, Zapier file URLs), whatever
 * its host: `beforeRequest` reads it. Set on requests, never sent.
 */
const PLAIN = { omniVideoPlain: true };

/**
 * `beforeRequest`: the bearer key goes to the API's own address only, never to the pre-signed
 * upload URL, the CDN or a Zapier file URL, even when those share the API's host.
 */
export const addBearerForApi: BeforeRequestMiddleware = (request, _z, bundle) => {
	if (request.middlewareData?.omniVideoPlain) return request;
	if (!mayCarryApiKey(request.url, connectionBaseUrl(bundle.authData))) return request;
	request.headers = { ...request.headers, Authorization: `Bearer ${bundle.authData.apiKey}` };
	return request;
};

/** Errors from Zapier's own middleware (ThrottledError on a 429 and the like) pass through. */
function isNetworkFailure(error: unknown): error is { code?: string; type?: string; name?: string; message: string } {
	const source = error as { name?: string; type?: string; code?: string };
	return source?.name === 'FetchError' || source?.type === 'system' || source?.name === 'AbortError';
}

/** core's transport on `z.request`: every status comes back to core, which applies docs/api.md#retries. */
export function zapierTransport(z: ZObject): Transport {
	const send =
		(plain: boolean) =>
		async (request: HttpRequest): Promise<HttpResponse> => {
			const isBytes = request.body instanceof Uint8Array;
			const streamed = request.body instanceof StreamBody ? request.body : undefined;
			let response;
			try {
				response = await z.request({
					url: request.url,
					method: request.method,
					headers: streamed ? { ...request.headers, 'Content-Length': String(streamed.length) } : request.headers,
					body: streamed
						? (streamed.stream as NodeJS.ReadableStream)
						: isBytes
							? Buffer.from(request.body as Uint8Array)
							: request.body === undefined
								? undefined
								: JSON.stringify(request.body),
					timeout: request.timeoutMs,
					redirect: 'manual',
					// The body is read here, up to core's cap, never whole into memory.
					raw: true,
					skipThrowForStatus: true,
					middlewareData: plain ? PLAIN : {},
				});
			} catch (error) {
				if (!isNetworkFailure(error)) throw error;
				throw new TransportFailure(transportFailureKind(error), error.message);
			}
			const headers = lowerCaseHeaders(response.headers);
			return { status: response.status, headers, body: await responseBody(response.body, headers['content-length']) };
		};
	return { api: send(false), plain: send(true) };
}

/** A plain GET that streams a URL's body (a Zapier file, the CDN): never with the key. */
export function plainDownload(z: ZObject, url: string) {
	return z.request({ url, method: 'GET', raw: true, follow: MAX_PLAIN_REDIRECTS, skipThrowForStatus: true, middlewareData: PLAIN });
}

// Zapier runs app code as plain Node: its timers are the way to wait.
const sleep = abortableSleep({ start: setTimeout, cancel: clearTimeout });

export interface ConnectedClient {
	client: OmniVideoClient;
	baseUrl: string;
	/** The sandbox on loopback may receive http:// callbacks; a real service never. */
	allowInsecureLoopbackCallback: boolean;
}

/** A core client for this Zap's connection; a Base URL that may not be used stops here. */
export function omniVideoClient(z: ZObject, bundle: Bundle): ConnectedClient {
	const baseUrl = connectionBaseUrl(bundle.authData);
	const problem = baseUrlProblem(baseUrl);
	if (problem) throw new z.errors.Error(`${problem} Edit the Omni Video connection.`, 'invalid_base_url', 400);
	const apiKey = String(bundle.authData.apiKey ?? '');
	const client = createOmniVideoClient({
		baseUrl,
		transport: zapierTransport(z),
		clock: { now: () => Date.now() },
		sleep,
		random: Math.random,
		limits: planLimits(bundle.authData),
		limiterKey: keyFingerprint(apiKey, baseUrl),
		redact: [apiKey],
	});
	return { client, baseUrl, allowInsecureLoopbackCallback: isLocalSandbox(baseUrl) };
}
