import { isLocalSandbox, normaliseBaseUrl } from '../../core';

/**
 * Zapier ends a step after 30 s, and its own work (starting the app, storing the output) comes out
 * of that: core gets this much, and every wait, retry and request timeout ends inside it.
 */
export const STEP_BUDGET_MS = 22_000;
/** A connection test answers within a few seconds, right or wrong. */
export const CONNECTION_TEST_BUDGET_MS = 5_000;

/** The moment core must be done by, on the clock core is given (Date.now). */
export function deadlineIn(budgetMs: number = STEP_BUDGET_MS): number {
	return Date.now() + budgetMs;
}

/** The connection's base URL as every request uses it (see normaliseBaseUrl). */
export function connectionBaseUrl(authData: Record<string, unknown>): string {
	return normaliseBaseUrl(authData.baseUrl);
}

/** What is wrong with a base URL, in the user's words; undefined when it can be used. */
export function baseUrlProblem(baseUrl: string): string | undefined {
	let url: URL;
	try {
		url = new URL(baseUrl);
	} catch {
		url = new URL('invalid:');
	}
	if (!/^https?:$/.test(url.protocol) || !url.host) {
		return 'Base URL must be the address of your Omni Video API, such as https://api.your-omni-video-host.com.';
	}
	if (url.pathname !== '/' || url.search || url.hash) {
		return `Base URL must be the address of the API alone, without a path: https://${url.host} rather than ${baseUrl}.`;
	}
	if (url.protocol === 'http:' && !isLocalSandbox(baseUrl)) {
		return `Base URL must start with https:// (your key would travel unencrypted): https://${url.host}. Only the local sandbox on 127.0.0.1 or localhost may use http://.`;
	}
	return undefined;
}
