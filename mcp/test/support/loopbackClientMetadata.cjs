/**
 * Preloaded (NODE_OPTIONS=--require) into a server the tests start, never shipped: the app's client
 * ID metadata documents are served by the test on 127.0.0.1, an address oidc-provider's fetch refuses
 * (SSRF protection, rightly). For those origins only (OMNI_VIDEO_TEST_METADATA_ORIGIN, comma-separated), the fetch
 * goes without oidc-provider's address-checking dispatcher; every other address is checked as shipped.
 */
const origins = (process.env.OMNI_VIDEO_TEST_METADATA_ORIGIN ?? '').split(',').filter(Boolean);
const shipped = globalThis.fetch;
globalThis.fetch = (input, init) => {
	const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
	if (origins.includes(url.origin) && init) {
		const { dispatcher: _checked, ...rest } = init;
		return shipped(input, rest);
	}
	return shipped(input, init);
};
