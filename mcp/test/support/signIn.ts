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

/**
 * An app's side of OAuth, as the SDK's clients drive it (Claude.ai and ChatGPT do the same): it keeps
 * its registration, code verifier and tokens, and hands the authorization URL to a browser.
 */
export class AppAuth implements OAuthClientProvider {
	registered?: Awaited<ReturnType<OAuthClientProvider['clientInformation']>>;
	saved?: Awaited<ReturnType<OAuthClientProvider['tokens']>>;
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
