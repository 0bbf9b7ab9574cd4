import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StreamableHTTPClientTransport, UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { chromium, type Browser, type Page } from 'playwright-core';

export { freePort } from './team';


/** Where the app's browser lands after sign-in: a page of the test's own that keeps what it was sent. */
export interface RedirectTarget {
	url: string;
	landed: URLSearchParams[];
	close(): Promise<void>;
}

export async function redirectTarget(): Promise<RedirectTarget> {
	const landed: URLSearchParams[] = [];
	const server = http.createServer((req, res) => {
		landed.push(new URL(req.url ?? '/', 'http://app').searchParams);
		res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Connected</title><p>Connected: you can close this tab.</p>');
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return { url: `http://127.0.0.1:${port}/callback`, landed, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

type DiscoveryState = Parameters<NonNullable<OAuthClientProvider['saveDiscoveryState']>>[0];

/**
 * An app's side of OAuth, as the SDK's clients drive it (Claude.ai and ChatGPT do the same): it keeps
 * its registration, code verifier, discovery and tokens, and hands the authorization URL to a
 * browser. The discovery kept across the redirect lets the SDK check that the code comes back to
 * the authorization server that issued it.
 */
export class AppAuth implements OAuthClientProvider {
	registered?: Awaited<ReturnType<OAuthClientProvider['clientInformation']>>;
	saved?: Awaited<ReturnType<OAuthClientProvider['tokens']>>;
	discovered?: DiscoveryState;
	verifier = '';
	authorizationUrl?: URL;
	clientMetadataUrl?: string;

	constructor(
		readonly redirectUrl: string,
		readonly name: string,
		options: { clientMetadataUrl?: string } = {},
	) {
		this.clientMetadataUrl = options.clientMetadataUrl;
	}

	get clientMetadata() {
		return { client_name: this.name, redirect_uris: [this.redirectUrl], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
	}

	clientInformation() {
		return this.registered;
	}
	saveClientInformation(information: NonNullable<AppAuth['registered']>) {
		this.registered = information;
	}
	tokens() {
		return this.saved;
	}
	saveTokens(tokens: NonNullable<AppAuth['saved']>) {
		this.saved = tokens;
	}
	redirectToAuthorization(url: URL) {
		this.authorizationUrl = url;
	}
	saveCodeVerifier(verifier: string) {
		this.verifier = verifier;
	}
	codeVerifier() {
		return this.verifier;
	}
	saveDiscoveryState(state: DiscoveryState) {
		this.discovered = state;
	}
	discoveryState() {
		return this.discovered;
	}
}

export type Era = 'modern' | 'legacy';

/** A connected app: its MCP client (signed in) and what it holds. */
export interface SignedInApp {
	client: { callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<{ content: unknown[]; structuredContent?: Record<string, unknown>; isError?: boolean }>; listTools(): Promise<{ tools: { name: string }[] }>; close(): Promise<void> };
	auth: AppAuth;
}

/**
 * Connects an app with no token: the server answers 401, the SDK discovers the authorization
 * server, registers (DCR, or its metadata document's URL) and hands over the authorization URL, which
 * `signIn` opens in a browser; the code it lands with is exchanged, and the app connects again.
 */
export async function connectApp(url: string, auth: AppAuth, era: Era, signIn: (authorizationUrl: URL) => Promise<URLSearchParams>): Promise<SignedInApp & { signInMs: number }> {
	const started = performance.now();
	const first = transportFor(url, auth, era);
	try {
		await clientFor(era).connect(first as never);
		throw new Error('the server let an app in without signing in');
	} catch (error) {
		if (!(error instanceof UnauthorizedError) && !(error instanceof Error && error.constructor.name === 'UnauthorizedError')) throw error;
	}
	if (!auth.authorizationUrl) throw new Error('the SDK did not reach the authorization URL');
	const landed = await signIn(auth.authorizationUrl);
	const code = landed.get('code');
	if (!code) throw new Error(`the sign-in did not end with a code: ${landed.toString()}`);
	if (era === 'modern') await (first as StreamableHTTPClientTransport).finishAuth(landed);
	else await (first as HttpV1).finishAuth(code);
	const client = await connectSignedIn(url, auth, era);
	return { ...client, signInMs: performance.now() - started };
}

/** An app connecting with the tokens it holds (refreshing them when the server says they expired). */
export async function connectSignedIn(url: string, auth: AppAuth, era: Era): Promise<SignedInApp> {
	const client = clientFor(era);
	await client.connect(transportFor(url, auth, era) as never);
	return {
		auth,
		client: {
			callTool: (params) => (era === 'modern' ? (client as Client).callTool(params) : (client as ClientV1).callTool(params)) as never,
			listTools: () => client.listTools() as never,
			close: () => client.close(),
		},
	};
}

function clientFor(era: Era): Client | ClientV1 {
	const info = { name: 'omni-video-connector-test', version: '1.0.0' };
	return era === 'modern' ? new Client(info, { versionNegotiation: { mode: 'auto' } } as ConstructorParameters<typeof Client>[1]) : new ClientV1(info);
}

function transportFor(url: string, auth: AppAuth, era: Era): StreamableHTTPClientTransport | HttpV1 {
	return era === 'modern' ? new StreamableHTTPClientTransport(new URL(url), { authProvider: auth }) : new HttpV1(new URL(url), { authProvider: auth as never });
}

/** Headless Chromium, as a person's browser. */
export async function browser(): Promise<Browser> {
	return await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
}

/**
 * What a person does on the sign-in page: opens the authorization URL, fills the form (`fill`), and
 * presses Allow; answers where the browser landed (the app's redirect URI, with code and iss).
 */
export async function signInWithBrowser(chrome: Browser, target: RedirectTarget, fill: (page: Page) => Promise<void>): Promise<(url: URL) => Promise<URLSearchParams>> {
	return async (url) => {
		const context = await chrome.newContext();
		try {
			const page = await context.newPage();
			await page.goto(url.toString());
			await fill(page);
			const before = target.landed.length;
			await Promise.all([
				page.waitForURL((landed) => landed.toString().startsWith(target.url), { timeout: 20_000 }).catch(async (error: unknown) => {
					throw new Error(`${String(error)}; the page says: ${(await page.textContent('body').catch(() => ''))?.trim()}`);
				}),
				page.getByRole('button', { name: 'Allow' }).click(),
			]);
			const landed = target.landed[before];
			if (!landed) throw new Error('the browser did not land on the app');
			return landed;
		} finally {
			await context.close();
		}
	};
}

/** A self-signed certificate for 127.0.0.1 (openssl), and an https server of the test's own with it. */
export function testCertificate(): { key: string; cert: string; certFile: string } {
	const dir = mkdtempSync(join(tmpdir(), 'omni-video-cimd-'));
	const keyFile = join(dir, 'key.pem');
	const certFile = join(dir, 'cert.pem');
	execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
	return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8'), certFile };
}

/** Serves an app's client ID metadata document at https://127.0.0.1:PORT/oauth/client.json, as an app publishes it. */
export async function clientMetadataHost(certificate: { key: string; cert: string }, redirectUrl: string, name: string): Promise<{ url: string; fetched: number; close(): Promise<void> }> {
	const state = { fetched: 0 };
	let url = '';
	const server = https.createServer({ key: certificate.key, cert: certificate.cert }, (req, res) => {
		state.fetched++;
		res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
		res.end(JSON.stringify({ client_id: url, client_name: name, redirect_uris: [redirectUrl], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' }));
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/oauth/client.json`;
	return {
		url,
		get fetched() {
			return state.fetched;
		},
		close: () => new Promise((resolve) => server.close(() => resolve())),
	};
}

/** A PKCE pair (S256), as an app makes one per sign-in. */
export function pkcePair(): { verifier: string; challenge: string } {
	const verifier = randomBytes(32).toString('base64url');
	return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** Registers an app by Dynamic Client Registration, as Claude.ai does. */
export async function registerApp(issuer: string, redirectUri: string, name: string): Promise<string> {
	const answer = await fetch(`${issuer}/oauth/register`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ client_name: name, redirect_uris: [redirectUri], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' }),
	});
	if (answer.status !== 201) throw new Error(`registration answered ${answer.status}: ${await answer.text()}`);
	return ((await answer.json()) as { client_id: string }).client_id;
}

/** The authorization URL an app sends a person's browser to. */
export function authorizationUrl(issuer: string, params: { clientId: string; redirectUri: string; challenge: string; resource?: string; scope?: string }): URL {
	const url = new URL(`${issuer}/oauth/authorize`);
	url.search = new URLSearchParams({
		response_type: 'code',
		client_id: params.clientId,
		redirect_uri: params.redirectUri,
		code_challenge: params.challenge,
		code_challenge_method: 'S256',
		state: randomBytes(8).toString('hex'),
		scope: params.scope ?? 'videos offline_access',
		resource: params.resource ?? `${issuer}/mcp`,
	}).toString();
	return url;
}

/** A POST to the token endpoint (or revocation), as an app sends it. */
export async function tokenEndpoint(issuer: string, path: 'token' | 'revoke', form: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
	const answer = await fetch(`${issuer}/oauth/${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() });
	const text = await answer.text();
	return { status: answer.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** A POST to /mcp with this bearer, as any client's first request: the status and WWW-Authenticate. */
export async function mcpWith(url: string, bearer: string | undefined): Promise<{ status: number; challenge: string | null; body: string }> {
	const answer = await fetch(url, {
		method: 'POST',
		headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
		body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'probe', version: '1' } } }),
	});
	return { status: answer.status, challenge: answer.headers.get('www-authenticate'), body: await answer.text() };
}

/** Registers an app by DCR as sent, answering the status and the body (its registration token too); `headers` go with the request. */
export async function registerRaw(issuer: string, redirectUri: string, extra: Record<string, unknown> & { headers?: Record<string, string> } = {}): Promise<{ status: number; body: Record<string, unknown> }> {
	const { headers = {}, ...fields } = extra;
	const answer = await fetch(`${issuer}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ client_name: 'An App', redirect_uris: [redirectUri], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none', ...fields }) });
	return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
}

/** An authorization server as issue 63's checks see it, on one process or on replicas behind the proxy. */
export interface AuthServerUnderTest {
	issuer: string;
	/** How many processes answer at the issuer in turn (the proxy's round robin): each is asked. */
	replicas: number;
	chrome: Browser;
	target: RedirectTarget;
	/** Apps' client ID metadata documents: one naming `target`, one naming http://evil.example/cb. */
	metadata: { safe: string; unsafe: string };
	/** What a person types on the page (their key, or their member name and code). */
	fill: (page: Page) => Promise<void>;
	/** The service's lookups per sign-in: 1 for a person's own key (its check), 0 for a member. */
	lookupsPerSignIn: number;
	/** Requests the service has seen so far (the sandbox's journal). */
	requests: () => number;
	/** Where codes and tokens of the run go, to be looked for in every line and record. */
	secrets: (string | undefined)[];
}

/**
 * The registrations of these checks come as from an address of their own (a proxy's X-Forwarded-For,
 * ignored where none is trusted), so that they leave a layout's allowance from 127.0.0.1 to its other cases.
 */
const CHECKS_ADDRESS = { 'x-forwarded-for': '192.0.2.63' };

/**
 * Issue 63, "only safe redirects": registration refuses http://evil.example/cb with the reason (DCR,
 * and a metadata document naming it, refused when read with no redirect anywhere), takes https and
 * loopback http; the page names the app by its metadata document's host or its redirect's; 0 requests.
 */
export async function onlySafeRedirects(server: AuthServerUnderTest): Promise<void> {
	const { issuer, metadata, target } = server;
	const before = server.requests();
	const evil = await registerRaw(issuer, 'http://evil.example/cb', { headers: CHECKS_ADDRESS });
	expect(evil.status).toBe(400);
	expect(evil.body).toMatchObject({ error: 'invalid_redirect_uri', error_description: expect.stringContaining('http://evil.example/cb') });
	for (const uri of ['https://app.example/cb', 'http://127.0.0.1:9/cb', 'http://[::1]:9/cb', 'http://localhost:9/cb']) expect((await registerRaw(issuer, uri, { headers: CHECKS_ADDRESS })).status).toBe(201);
	// A metadata document naming an unsafe redirect: refused when it is read (by each replica), with the reason, no redirect anywhere.
	const { challenge } = pkcePair();
	for (let i = 0; i < server.replicas; i++) {
		const cimd = await fetch(authorizationUrl(issuer, { clientId: metadata.unsafe, redirectUri: 'http://evil.example/cb', challenge }), { redirect: 'manual' });
		expect(cimd.status).toBe(400);
		expect(cimd.headers.get('location')).toBeNull();
		expect(await cimd.text()).toContain('redirect_uris must be https');
	}
	// The page names the app by the host of its metadata document, or of its redirect URI.
	const context = await server.chrome.newContext();
	try {
		const page = await context.newPage();
		await page.goto(authorizationUrl(issuer, { clientId: metadata.safe, redirectUri: target.url, challenge }).toString());
		expect(await page.locator('.from').textContent()).toContain(`From ${new URL(metadata.safe).host}`);
		const named = await registerRaw(issuer, target.url, { client_name: 'Named App', headers: CHECKS_ADDRESS });
		await page.goto(authorizationUrl(issuer, { clientId: String(named.body.client_id), redirectUri: target.url, challenge }).toString());
		expect(await page.locator('.from').textContent()).toContain(`From ${new URL(target.url).host}`);
	} finally {
		await context.close();
	}
	expect(server.requests() - before).toBe(0);
}

/** Every answer of the authorization server: not kept by any cache, not shown in any frame. */
function unframeable(response: Response): void {
	expect(response.headers.get('cache-control')).toBe('no-store');
	expect(response.headers.get('x-frame-options')).toBe('DENY');
	expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
}

/**
 * Issue 63, "only what is used": every replica's metadata lists code with PKCE S256, refresh and
 * public clients and nothing else (no PAR, DPoP, introspection, OpenID); a client with a secret is
 * refused; the metadata, PAR's 404, the authorize redirect, its error page and a token error are
 * each no-store and unframeable; an app asking for openid gets no ID token. Only the sign-in's own lookups.
 */
export async function onlyWhatIsUsed(server: AuthServerUnderTest): Promise<void> {
	const { issuer, target } = server;
	const before = server.requests();
	const advertised = new Set<string>();
	for (let i = 0; i < server.replicas; i++) {
		const answer = await fetch(`${issuer}/.well-known/oauth-authorization-server`);
		unframeable(answer);
		const metadata = (await answer.json()) as Record<string, unknown>;
		expect(metadata).toMatchObject({ scopes_supported: ['videos', 'offline_access'], token_endpoint_auth_methods_supported: ['none'], grant_types_supported: ['authorization_code', 'refresh_token'], response_types_supported: ['code'], code_challenge_methods_supported: ['S256'] });
		for (const absent of ['pushed_authorization_request_endpoint', 'dpop_signing_alg_values_supported', 'introspection_endpoint', 'userinfo_endpoint', 'end_session_endpoint', 'id_token_signing_alg_values_supported', 'claims_supported', 'token_endpoint_auth_signing_alg_values_supported']) expect(metadata).not.toHaveProperty(absent);
		advertised.add(JSON.stringify(metadata));
	}
	// Every replica advertises the same.
	expect(advertised.size).toBe(1);
	// A client with a secret: refused at registration.
	expect(await registerRaw(issuer, target.url, { token_endpoint_auth_method: 'client_secret_basic', headers: CHECKS_ADDRESS })).toMatchObject({ status: 400, body: { error: 'invalid_client_metadata' } });
	// PAR is not there.
	const par = await fetch(`${issuer}/oauth/par`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'client_id=x' });
	expect(par.status).toBe(404);
	unframeable(par);
	// The authorization endpoint's redirect, its error page and the token endpoint's error: no-store, unframeable.
	const clientId = String((await registerRaw(issuer, target.url, { client_name: 'Plain App', headers: CHECKS_ADDRESS })).body.client_id);
	const pair = pkcePair();
	const redirect = await fetch(authorizationUrl(issuer, { clientId, redirectUri: target.url, challenge: pair.challenge }), { redirect: 'manual' });
	expect(redirect.status).toBe(303);
	unframeable(redirect);
	const errorPage = await fetch(authorizationUrl(issuer, { clientId: 'no-such-app', redirectUri: target.url, challenge: pair.challenge }), { redirect: 'manual' });
	expect(errorPage.status).toBe(400);
	unframeable(errorPage);
	const tokenError = await fetch(`${issuer}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'authorization_code', code: 'x', client_id: clientId, code_verifier: pair.verifier, redirect_uri: target.url }).toString() });
	expect(tokenError.status).toBe(400);
	unframeable(tokenError);
	// An app asking for openid: its grant has no openid, so no ID token (oidc-provider always knows the scope; nothing grants it).
	const landed = await (await signInWithBrowser(server.chrome, target, server.fill))(authorizationUrl(issuer, { clientId, redirectUri: target.url, challenge: pair.challenge, scope: 'openid videos offline_access' }));
	const tokens = await tokenEndpoint(issuer, 'token', { grant_type: 'authorization_code', code: String(landed.get('code')), redirect_uri: target.url, code_verifier: pair.verifier, client_id: clientId });
	server.secrets.push(String(landed.get('code')), String(tokens.body.access_token), String(tokens.body.refresh_token));
	expect(tokens.status).toBe(200);
	expect(tokens.body).not.toHaveProperty('id_token');
	expect(String(tokens.body.scope).split(' ')).not.toContain('openid');
	expect(server.requests() - before).toBe(server.lookupsPerSignIn);
}
