import type {
	ICredentialDataDecryptedObject,
	IDataObject,
	IExecuteFunctions,
	IHttpRequestOptions,
	IWebhookFunctions,
} from 'n8n-workflow';
import {
	TransportFailure,
	lowerCaseHeaders,
	responseBody,
	transportFailureKind,
	isLocalSandbox,
	normaliseBaseUrl,
	planLimits,
	createOmniVideoClient,
	keyFingerprint,
	type HttpRequest,
	type HttpResponse,
	type OmniVideoClient,
	type Transport,
} from '../../core';
import { hostClockFor, type HostClock } from './hostClock';
import { hostSleep } from './hostSleep';

export const CREDENTIAL_TYPE = 'omniVideoApi';

export type N8nContext = IExecuteFunctions | IWebhookFunctions;

interface FullResponse {
	body: unknown;
	headers: Record<string, unknown>;
	statusCode: number;
}

export { planLimits, isLocalSandbox };

export function baseUrlOf(credentials: ICredentialDataDecryptedObject): string {
	return normaliseBaseUrl(credentials.baseUrl);
}

/** n8n runs a node used by an AI agent as a "<name>Tool" type: JSON only, never a parked execution. */
export function isToolExecution(context: N8nContext): boolean {
	return context.getNode().type.endsWith('Tool');
}

/**
 * core's transport on n8n's helpers: API calls through httpRequestWithAuthentication (the
 * credential adds the bearer header), everything else (upload URL, CDN) through plain
 * httpRequest; core's client sends only the API's own URLs on the api side (mayCarryApiKey).
 */
function n8nTransport(context: N8nContext): Transport {
	const toOptions = (request: HttpRequest): IHttpRequestOptions => {
		const isBytes = request.body instanceof Uint8Array;
		return {
			method: request.method,
			url: request.url,
			headers: request.headers as IDataObject,
			body: isBytes ? Buffer.from(request.body as Uint8Array) : (request.body as IDataObject | undefined),
			json: !isBytes && request.body !== undefined,
			encoding: 'stream',
			returnFullResponse: true,
			ignoreHttpStatusErrors: true,
			disableFollowRedirect: true,
			timeout: request.timeoutMs,
		};
	};
	const send = async (request: HttpRequest, authenticated: boolean): Promise<HttpResponse> => {
		let response: FullResponse | undefined;
		let failure: unknown;
		try {
			response = (authenticated
				? await context.helpers.httpRequestWithAuthentication.call(context, CREDENTIAL_TYPE, toOptions(request))
				: await context.helpers.httpRequest(toOptions(request))) as FullResponse;
		} catch (error) {
			failure = error;
		}
		if (!response) {
			// Only a kind and the message: n8n's error objects carry the request, headers included.
			throw new TransportFailure(transportFailureKind(failure), String((failure as Error)?.message ?? failure));
		}
		const headers = lowerCaseHeaders(response.headers);
		return { status: response.statusCode, headers, body: await responseBody(response.body, headers['content-length']) };
	};
	return { api: (request) => send(request, true), plain: (request) => send(request, false) };
}

/** core's client for this execution; its limiter is shared with every other use of the key. */
export async function omniVideoClient(
	context: N8nContext,
): Promise<{ client: OmniVideoClient; clock: HostClock; credentials: ICredentialDataDecryptedObject; baseUrl: string }> {
	const credentials = await context.getCredentials(CREDENTIAL_TYPE);
	const baseUrl = baseUrlOf(credentials);
	const apiKey = String(credentials.apiKey ?? '');
	const transport = n8nTransport(context);
	const clock = await hostClockFor(baseUrl, transport);
	const client = createOmniVideoClient({
		baseUrl,
		transport,
		clock,
		sleep: (ms, signal) => hostSleep(clock.realMs(ms), signal as AbortSignal | undefined),
		random: () => Math.random(),
		limits: planLimits(credentials),
		limiterKey: keyFingerprint(apiKey, baseUrl),
		redact: [apiKey],
	});
	return { client, clock, credentials, baseUrl };
}
