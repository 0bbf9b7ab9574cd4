import type { IncomingMessage } from 'node:http';
import { cookieSettings, safeRedirectUri } from '../src/signIn/authServer';
import { clientAddress } from '../src/signIn/signInThrottle';
import { DEFAULT_SIGN_IN_LIMITS, signInLimits } from '../src/signInLimits';
import { readSettings, SettingsError } from '../src/settings';

/** Sign-in's small rules, without a server: what signIn.test.ts drives end to end cannot reach them all (an https public URL, a proxy's header). */
describe("sign-in's rules", () => {
	it('a redirect URI is https, or http to a loopback address only', () => {
		for (const uri of ['https://app.example/cb', 'https://127.0.0.1/cb', 'http://127.0.0.1:8080/cb', 'http://[::1]:9/cb', 'http://localhost/cb']) expect(safeRedirectUri(uri)).toBe(true);
		for (const uri of ['http://evil.example/cb', 'http://127.0.0.1.evil.example/cb', 'http://10.0.0.1/cb', 'javascript:alert(1)', 'myapp://cb', 'not a url', 'http://localhost.evil.example/cb']) expect(safeRedirectUri(uri)).toBe(false);
	});

	it("cookies are __Host- (Secure, Path=/) on an https public URL; the resume cookie, whose path oidc-provider fixes, __Secure-", () => {
		const https = cookieSettings('https://mcp.example.com', 'k');
		expect(https.names).toEqual({ session: '__Host-session', interaction: '__Host-interaction', resume: '__Secure-interaction-resume' });
		expect(https.long).toMatchObject({ secure: true, path: '/', httpOnly: true });
		expect(https.short).toMatchObject({ secure: true, path: '/', httpOnly: true });
		// On loopback http (trying it locally) a browser refuses prefixed cookies without Secure: plain names.
		expect(cookieSettings('http://127.0.0.1:3333', 'k').names?.session).toBe('_session');
	});

	it("a request's address is the socket's, unless the operator trusts a proxy: then X-Forwarded-For's last entry", () => {
		const request = (forwarded?: string) => ({ socket: { remoteAddress: '10.0.0.5' }, headers: forwarded ? { 'x-forwarded-for': forwarded } : {} }) as unknown as IncomingMessage;
		expect(clientAddress(request('203.0.113.9'), false)).toBe('10.0.0.5');
		expect(clientAddress(request('1.2.3.4, 203.0.113.9'), true)).toBe('203.0.113.9');
		expect(clientAddress(request('not-an-address'), true)).toBe('10.0.0.5');
		expect(clientAddress(request(), true)).toBe('10.0.0.5');
	});

	it('the throttle is configured by one setting, safe by default; a wrong one stops the server with the reason', () => {
		expect(signInLimits(undefined)).toEqual(DEFAULT_SIGN_IN_LIMITS);
		expect(signInLimits('failures=3, lock=2')).toMatchObject({ failures: 3, lockMs: 2_000, keyChecks: 10 });
		const env = { OMNI_VIDEO_MCP_SECRET: 'a secret of the test, thirty-two characters or more', OMNI_VIDEO_BASE_URL: 'http://127.0.0.1:9' };
		const args = ['--http', '--public-url', 'https://mcp.example.com'];
		expect(readSettings(args, env).signIn).toMatchObject({ limits: DEFAULT_SIGN_IN_LIMITS, trustProxy: false });
		expect(readSettings(args, { ...env, OMNI_VIDEO_MCP_TRUST_PROXY: '1' }).signIn?.trustProxy).toBe(true);
		expect(() => readSettings(args, { ...env, OMNI_VIDEO_MCP_SIGN_IN_LIMITS: 'lock=0' })).toThrow(SettingsError);
		expect(() => readSettings(args, { ...env, OMNI_VIDEO_MCP_TRUST_PROXY: 'yes' })).toThrow(/TRUST_PROXY/);
	});
});
