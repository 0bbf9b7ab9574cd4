import type { ApiRuntime } from '../http/apiRequest';
import { callApi } from '../http/apiRequest';
import type { HttpResponse, SendRequest } from '../http/transport';
import { PLANS, type PlanName } from '../types';
import { AuthError, OmniVideoError, RateLimitError, TransportError } from '../errors/errors';
import { isJobBody } from '../answers/parseJob';
import { parseErrorBody } from '../answers/parseErrorBody';
import { jobPath } from './getJob';
import { settle } from '../settle';

/** The job id reserved for credential tests (docs/api.md#authentication): valid keys get 404, bad keys 401. */
export const CREDENTIAL_CHECK_JOB_ID = 'job_credential_check';

/** Why a check failed, for a platform to word and classify (reconnect, retry, fix the URL). */
export type CredentialProblem =
	| 'key'
	| 'no_api_access'
	| 'not_omni_video'
	| 'unreachable'
	| 'timeout'
	| 'rate_limited'
	| 'service';

export type CredentialCheck =
	| {
			ok: true;
			/** The plan whose limit the service's X-RateLimit-Limit header names, when it names one. */
			servicePlan?: PlanName;
	  }
	| { ok: false; problem: CredentialProblem; message: string; retryAfterMs?: number };

/** The plan a rate-limit header's limit belongs to (a minute or an hour window), if any. */
export function planOfRateLimit(limit: string | undefined): PlanName | undefined {
	const value = Number(limit);
	if (!limit || !Number.isFinite(value)) return undefined;
	for (const name of Object.keys(PLANS) as PlanName[]) {
		if (PLANS[name].requestsPerMinute === value || PLANS[name].requestsPerHour === value) return name;
	}
	return undefined;
}

/**
 * The API's own "no such job": its error shape, code not_found and a request id. Any web server
 * answers 404 to an unknown path; only the Omni Video API answers this.
 */
function isApiNotFound(response: HttpResponse): boolean {
	const parsed = parseErrorBody(response.body);
	return response.status === 404 && parsed.code === 'not_found' && Boolean(parsed.requestId ?? response.headers['x-request-id']);
}

const NOT_OMNI_VIDEO =
	'The server at the Base URL answered, but not the way the Omni Video API does. Check the Base URL: it is the address of the API alone, such as https://api.your-omni-video-host.com, without /api/v1.';

/**
 * Proves a key against the real API at the cost of one request (docs/api.md#authentication): the API's own
 * 404 for the reserved job means the key works; 401 a bad key, 403 a plan without API access; no
 * answer, or an answer in another shape, says the Base URL is wrong or the service unreachable,
 * not that the key is bad.
 */
export async function checkCredentials(runtime: ApiRuntime, options: { deadlineAtMs?: number } = {}): Promise<CredentialCheck> {
	let last: HttpResponse | undefined;
	const api: SendRequest = async (request) => (last = await runtime.transport.api(request));
	const watched: ApiRuntime = { ...runtime, transport: { ...runtime.transport, api } };
	const called = await settle(
		callApi(watched, {
			operation: 'credentialTest',
			method: 'GET',
			path: jobPath(CREDENTIAL_CHECK_JOB_ID),
			retryBudgetMs: 0,
			deadlineAtMs: options.deadlineAtMs,
		}),
	);
	if (!called.ok) {
		if (!(called.error instanceof OmniVideoError)) throw called.error;
		if (last && isApiNotFound(last)) return { ok: true, servicePlan: planOfRateLimit(last.headers['x-ratelimit-limit']) };
		return failure(called.error, last);
	}
	// A real job by that name would also prove the key works; a page of HTML would not.
	if (last && isJobBody(last.body)) return { ok: true, servicePlan: planOfRateLimit(last.headers['x-ratelimit-limit']) };
	return { ok: false, problem: 'not_omni_video', message: NOT_OMNI_VIDEO };
}

function failure(error: OmniVideoError, last: HttpResponse | undefined): CredentialCheck {
	if (error instanceof AuthError) {
		return { ok: false, problem: error.status === 403 ? 'no_api_access' : 'key', message: error.message };
	}
	if (error instanceof RateLimitError) {
		return { ok: false, problem: 'rate_limited', message: error.message, retryAfterMs: error.retryAfterMs };
	}
	if (error instanceof TransportError) {
		return { ok: false, problem: error.failure === 'timeout' ? 'timeout' : 'unreachable', message: error.message };
	}
	// 5xx from something that speaks the API's error shape is the service being down; anything
	// else (a 404 page, a redirect, a 400 of another API) is the wrong address.
	const speaksApi = last !== undefined && Boolean(parseErrorBody(last.body).requestId);
	if (error.status !== undefined && error.status >= 500 && speaksApi) return { ok: false, problem: 'service', message: error.message };
	return { ok: false, problem: 'not_omni_video', message: NOT_OMNI_VIDEO };
}
