/** An http:// loopback base URL means the local sandbox, which may call back over plain http. */
export function isLocalSandbox(baseUrl: string): boolean {
	return /^http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/.test(baseUrl);
}

/**
 * The base URL as entered, without spaces, trailing slashes or the API's own `/api/v1` (or `/api`):
 * users often paste an endpoint's address, and every path is added to the base URL.
 */
export function normaliseBaseUrl(baseUrl: unknown): string {
	return String(baseUrl ?? '')
		.trim()
		.replace(/\/+$/, '')
		.replace(/\/api(\/v1)?$/i, '')
		.replace(/\/+$/, '');
}

/**
 * What is wrong with a (normalised) base URL, in the user's words; undefined when it can be used.
 * The key travels to it, so only https:// (or the local sandbox on loopback) and no path.
 */
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
