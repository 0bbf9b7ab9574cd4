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
