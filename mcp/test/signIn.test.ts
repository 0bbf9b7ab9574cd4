import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { Sandbox } from '../../sandbox';
import { CLI, counts, httpServer, sandboxFor, serverEnv, SIGN_IN_SECRET, stateDir, type HttpServer } from './support/mcpHarness';
import {
	AppAuth,
	authorizationUrl,
	browser,
	clientMetadataHost,
	connectApp,
	connectSignedIn,
	freePort,
	mcpWith,
	onlySafeRedirects,
	onlyWhatIsUsed,
	pkcePair,
	redirectTarget,
	registerApp,
	registerRaw,
	signInWithBrowser,
	testCertificate,
	tokenEndpoint,
	type AuthServerUnderTest,
	type RedirectTarget,
} from './support/signIn';
import { startProxy, startRedis, type Proxy, type RedisServer } from './support/team';
import { createClient } from '@redis/client';

jest.setTimeout(180_000);

/**
 * An app (the SDK's own OAuth client, as Claude.ai and ChatGPT drive it) signs in at the server's
 * authorization server, a person filling the sign-in page in headless Chromium, and the attacks on
 * each step. Needs Chromium and Redis (Debian's): in the team step of .ci/run (MCP_TEAM_TEST=1),
 * which installs them when missing.
 */
const describeSignIn = process.env.MCP_TEAM_TEST === '1' ? describe : describe.skip;

const fillKey = (apiKey: string) => async (page: Page) => {
	await page.getByLabel(/API key/).fill(apiKey);
	await page.getByLabel('Plan').selectOption('pro');
};

const fillMember = (name: string, code: string) => async (page: Page) => {
	await page.getByLabel('Member name').fill(name);
	await page.getByLabel(/Sign-in code/).fill(code);
};

/** The records of that kind a folder holds (file names are the records' names, escaped). */
const recordsOf = (dir: string, kind: string) => readdirSync(join(dir, 'records')).filter((name) => name.startsWith(`${kind}%3a`));

/** Every file under a folder (the records folder: a file per record, and its locks). */
const filesUnder = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)]));

/** Whether a text holds any of these secrets. */
const leaks = (text: string, secrets: (string | undefined)[]) => secrets.filter((secret): secret is string => Boolean(secret) && text.includes(secret as string));

/** The service's credential lookups so far (the free lookup that checks a typed key), from the sandbox's journal. */
const credentialLookups = (sandbox: Sandbox) => sandbox.journal.filter((entry) => entry.path === '/api/v1/jobs/job_credential_check').length;

/**
 * Keys typed on the page from one address, as the operator's proxy names it (X-Forwarded-For, which
 * the browser sends with every request of its context): each try's status, what the page says, and
 * the service's credential lookups once it was answered. Every try here is refused (no redirect).
 */
async function typeKeys(chrome: Browser, url: URL, address: string, keys: string[], sandbox: Sandbox): Promise<{ status: number; says: string; lookups: number }[]> {
	const context = await chrome.newContext({ extraHTTPHeaders: { 'x-forwarded-for': address } });
	try {
		const page = await context.newPage();
		await page.goto(url.toString());
		const tries: { status: number; says: string; lookups: number }[] = [];
		for (const key of keys) {
			await fillKey(key)(page);
			const [answer] = await Promise.all([page.waitForResponse((response) => response.request().method() === 'POST'), page.getByRole('button', { name: 'Allow' }).click()]);
			tries.push({ status: answer.status(), says: String(await page.getByRole('alert').textContent()), lookups: credentialLookups(sandbox) });
		}
		return tries;
	} finally {
		await context.close();
	}
}

/** A counter's value in /metrics, summed over these servers (each counts what it served). */
async function counted(urls: string[], counter: string): Promise<number> {
	let sum = 0;
	for (const url of urls) {
		const line = (await (await fetch(url.replace(/\/mcp$/, '/metrics'))).text()).split('\n').find((row) => row.startsWith(`${counter} `));
		sum += Number(line?.slice(counter.length + 1) ?? 0);
	}
	return sum;
}

describeSignIn('Claude.ai and ChatGPT: people sign in with their own key (one process, its records folder)', () => {
	let sandbox: Sandbox;
	let server: HttpServer;
	let issuer: string;
	let folder: string;
	let chrome: Browser;
	let target: RedirectTarget;
	let metadataHost: Awaited<ReturnType<typeof clientMetadataHost>>;
	/** An app's metadata document naming a plain-http redirect on another host. */
	let unsafeMetadataHost: Awaited<ReturnType<typeof clientMetadataHost>>;
	const secrets: (string | undefined)[] = [];

	beforeAll(async () => {
		sandbox = await sandboxFor('default', { insecureCallbacks: true });
		const port = await freePort();
		issuer = `http://127.0.0.1:${port}`;
		folder = stateDir();
		target = await redirectTarget();
		const certificate = testCertificate();
		metadataHost = await clientMetadataHost(certificate, target.url, 'ChatGPT');
		unsafeMetadataHost = await clientMetadataHost(certificate, 'http://evil.example/cb', 'Unsafe App');
		// No key in the server's environment: people bring their own at sign-in.
		const { OMNI_VIDEO_API_KEY: _key, ...env } = serverEnv(sandbox, {
			OMNI_VIDEO_MCP_STATE_DIR: folder,
			OMNI_VIDEO_MCP_SECRET: SIGN_IN_SECRET,
			// The app's metadata document is on this machine, behind a certificate of the test's own: the
			// test's preload lets that one origin past the private-address check (nothing shipped does).
			NODE_OPTIONS: `--require ${join(__dirname, 'support', 'loopbackClientMetadata.cjs')}`,
			OMNI_VIDEO_TEST_METADATA_ORIGIN: [metadataHost.url, unsafeMetadataHost.url].map((url) => new URL(url).origin).join(','),
			// Short windows, so that the throttle's cases do not wait long (the defaults are minutes).
			OMNI_VIDEO_MCP_SIGN_IN_LIMITS: 'failures=2,lock=1,window=3,key-checks=5',
			NODE_EXTRA_CA_CERTS: certificate.certFile,
		});
		server = await httpServer(env, ['--public-url', issuer], port);
		chrome = await browser();
		secrets.push(sandbox.keys.pro, SIGN_IN_SECRET);
	});
	afterAll(async () => {
		// Whatever the tests saw (keys, tokens, codes): none is in any line the server wrote.
		if (server) expect(leaks(server.log(), secrets)).toEqual([]);
		await chrome?.close();
		await target?.close();
		await metadataHost?.close();
		await unsafeMetadataHost?.close();
		await server?.stop();
		await sandbox?.close();
	});
	/** This process, as the checks shared with the replicas' layouts see it. */
	const oneProcess = (): AuthServerUnderTest => ({ issuer, replicas: 1, chrome, target, metadata: { safe: metadataHost.url, unsafe: unsafeMetadataHost.url }, fill: fillKey(sandbox.keys.pro), lookupsPerSignIn: 1, requests: () => counts(sandbox).requests, secrets });

	it('without a token: 401 with the metadata that starts sign-in (RFC 9728, RFC 8414), 0 requests', async () => {
		const before = counts(sandbox).requests;
		const refused = await mcpWith(server.url, undefined);
		expect(refused.status).toBe(401);
		expect(refused.challenge).toBe(`Bearer resource_metadata="${issuer}/.well-known/oauth-protected-resource/mcp", scope="videos"`);
		const resource = (await (await fetch(`${issuer}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<string, unknown>;
		expect(resource).toMatchObject({ resource: `${issuer}/mcp`, authorization_servers: [issuer], scopes_supported: ['videos'] });
		const metadata = (await (await fetch(`${issuer}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
		expect(metadata).toMatchObject({
			issuer,
			authorization_endpoint: `${issuer}/oauth/authorize`,
			token_endpoint: `${issuer}/oauth/token`,
			registration_endpoint: `${issuer}/oauth/register`,
			revocation_endpoint: `${issuer}/oauth/revoke`,
			code_challenge_methods_supported: ['S256'],
			authorization_response_iss_parameter_supported: true,
			client_id_metadata_document_supported: true,
		});
		expect(counts(sandbox).requests - before).toBe(0);
	});

	it('Claude-like (2026-07-28, DCR): discovery, registration, the page, code, token, a video and its retry from the records', async () => {
		const auth = new AppAuth(target.url, 'Claude');
		const before = counts(sandbox).requests;
		const app = await connectApp(server.url, auth, 'modern', await signInWithBrowser(chrome, target, fillKey(sandbox.keys.pro)));
		secrets.push(auth.saved?.access_token, auth.saved?.refresh_token);
		try {
			// The key checked once, with the reserved lookup: no credits.
			expect(sandbox.journal.slice(-1)[0]).toMatchObject({ method: 'GET', path: '/api/v1/jobs/job_credential_check', status: 404 });
			expect(counts(sandbox).requests - before).toBe(1);
			expect(recordsOf(folder, 'account')).toHaveLength(1);
			process.stdout.write(`first sign-in end to end (2026-07-28, DCR): ${Math.round(app.signInMs)} ms\n`);
			const made = await app.client.callTool({ name: 'generate_video', arguments: { prompt: 'A kite over a signed-in field', resolution: '720P', duration: 4, waitSeconds: 30 } });
			expect(made.structuredContent).toMatchObject({ status: 'done' });
			const creates = counts(sandbox).creates;
			const again = await app.client.callTool({ name: 'generate_video', arguments: { prompt: 'A kite over a signed-in field', resolution: '720P', duration: 4, waitSeconds: 30 } });
			expect(again.structuredContent).toMatchObject({ jobId: made.structuredContent?.jobId, status: 'done' });
			expect(counts(sandbox).creates).toBe(creates);
			expect(JSON.stringify([made, again])).not.toContain(sandbox.keys.pro);
		} finally {
			await app.client.close();
		}
	});

	it('ChatGPT-like (2025, a client ID metadata document): signs in without registering, and calls a tool', async () => {
		const auth = new AppAuth(target.url, 'ChatGPT', { clientMetadataUrl: metadataHost.url });
		const app = await connectApp(server.url, auth, 'legacy', await signInWithBrowser(chrome, target, fillKey(sandbox.keys.pro)));
		secrets.push(auth.saved?.access_token, auth.saved?.refresh_token);
		try {
			expect(auth.registered?.client_id).toBe(metadataHost.url);
			expect(metadataHost.fetched).toBeGreaterThan(0);
			const { tools } = await app.client.listTools();
			expect(tools.map((tool) => tool.name)).toContain('get_job');
		} finally {
			await app.client.close();
		}
	});

	it('refresh tokens rotate; a used one presented again ends the grant; revocation ends a token at once', async () => {
		const auth = new AppAuth(target.url, 'Claude');
		const app = await connectApp(server.url, auth, 'modern', await signInWithBrowser(chrome, target, fillKey(sandbox.keys.pro)));
		await app.client.close();
		const clientId = String(auth.registered?.client_id);
		const first = auth.saved!;
		const refreshed = await tokenEndpoint(issuer, 'token', { grant_type: 'refresh_token', refresh_token: String(first.refresh_token), client_id: clientId });
		expect(refreshed.status).toBe(200);
		expect(refreshed.body.refresh_token).not.toBe(first.refresh_token);
		secrets.push(first.access_token, first.refresh_token, String(refreshed.body.access_token), String(refreshed.body.refresh_token));
		const before = counts(sandbox).requests;
		expect((await mcpWith(server.url, String(refreshed.body.access_token))).status).toBe(200);
		// The old refresh token again: refused, and the grant it belongs to is ended (its newest token too).
		const replayed = await tokenEndpoint(issuer, 'token', { grant_type: 'refresh_token', refresh_token: String(first.refresh_token), client_id: clientId });
		expect(replayed).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
		expect((await mcpWith(server.url, String(refreshed.body.access_token))).status).toBe(401);

		// Another sign-in, its access token revoked by the app (RFC 7009).
		const other = new AppAuth(target.url, 'Claude');
		const second = await connectApp(server.url, other, 'modern', await signInWithBrowser(chrome, target, fillKey(sandbox.keys.pro)));
		await second.client.close();
		secrets.push(other.saved?.access_token, other.saved?.refresh_token);
		const token = String(other.saved?.access_token);
		expect((await tokenEndpoint(issuer, 'revoke', { token, client_id: String(other.registered?.client_id) })).status).toBe(200);
		const revoked = await mcpWith(server.url, token);
		expect(revoked.status).toBe(401);
		expect(revoked.challenge).toContain('error="invalid_token"');
		// The initialize with a live token reached no service endpoint; neither did any refusal.
		expect(counts(sandbox).requests - before).toBe(1);
	});

	it('the sign-in page: fits a phone, says who asks, refuses a wrong key with the reason and stores nothing, refuses a forged post, cannot be framed', async () => {
		const clientId = await registerApp(issuer, target.url, 'Some App');
		const { challenge } = pkcePair();
		// A phone's screen: the page fits it without scrolling sideways.
		const context = await chrome.newContext({ viewport: { width: 360, height: 740 } });
		try {
			const page = await context.newPage();
			const opened = await page.goto(authorizationUrl(issuer, { clientId, redirectUri: target.url, challenge }).toString());
			expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
			const headers = (await opened?.request().redirectedFrom()?.response())?.headers() ?? {};
			expect(page.url()).toMatch(new RegExp(`^${issuer}/signin/`));
			expect(page.url()).not.toContain(sandbox.keys.pro);
			const pageHeaders = (await opened?.allHeaders()) ?? headers;
			expect(pageHeaders['x-frame-options']).toBe('DENY');
			expect(pageHeaders['content-security-policy']).toContain("frame-ancestors 'none'");
			expect(pageHeaders['cache-control']).toBe('no-store');
			expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Connect Some App to Omni Video');
			expect(await page.textContent('main')).toContain(`returning to ${new URL(target.url).host}`);

			// A wrong key: the reason, nothing stored or kept in memory, one free lookup.
			const accounts = recordsOf(folder, 'account').length;
			const keysHeld = async () => Number(/^omni_video_mcp_keys_held (\S+)$/m.exec(await (await fetch(`${issuer}/metrics`)).text())?.[1]);
			const held = await keysHeld();
			const before = counts(sandbox).requests;
			await fillKey('omni_wrong_key')(page);
			const [answer] = await Promise.all([page.waitForResponse((response) => response.request().method() === 'POST'), page.getByRole('button', { name: 'Allow' }).click()]);
			expect(answer.status()).toBe(401);
			expect(await page.getByRole('alert').textContent()).toContain('Omni Video did not accept this API key');
			expect(recordsOf(folder, 'account')).toHaveLength(accounts);
			expect(await keysHeld()).toBe(held);
			expect(counts(sandbox).requests - before).toBe(1);

			// The same form with its CSRF token changed: refused, nothing checked or stored.
			await page.locator('input[name=csrf]').evaluate((input: HTMLInputElement) => (input.value = 'forged'));
			await fillKey(sandbox.keys.pro)(page);
			const [forged] = await Promise.all([page.waitForResponse((response) => response.request().method() === 'POST'), page.getByRole('button', { name: 'Allow' }).click()]);
			expect(forged.status()).toBe(403);
			expect(counts(sandbox).requests - before).toBe(1);

			// Posted from another site, with the person's cookies: refused by its Origin.
			const cookies = (await context.cookies(page.url())).map((cookie) => `${cookie.name}=${cookie.value}`).join('; ');
			const csrf = await page.goto(page.url()).then(() => page.locator('input[name=csrf]').inputValue());
			const crossSite = await fetch(page.url(), {
				method: 'POST',
				headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookies, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
				body: new URLSearchParams({ csrf, apiKey: sandbox.keys.pro, plan: 'pro', action: 'allow' }).toString(),
				redirect: 'manual',
			});
			expect(crossSite.status).toBe(403);
			expect(recordsOf(folder, 'account')).toHaveLength(accounts);
			expect(counts(sandbox).requests - before).toBe(1);
		} finally {
			await context.close();
		}
	});

	it('attacks on the authorization server, each refused with 0 requests to the service', async () => {
		const before = counts(sandbox).requests;
		const clientId = await registerApp(issuer, target.url, 'Some App');
		const pair = pkcePair();
		const noFollow = { redirect: 'manual' as const };

		// A redirect URI the app did not register: an error page, no redirect anywhere.
		const wrongRedirect = await fetch(authorizationUrl(issuer, { clientId, redirectUri: 'https://evil.example/callback', challenge: pair.challenge }), noFollow);
		expect(wrongRedirect.status).toBe(400);
		expect(wrongRedirect.headers.get('location')).toBeNull();
		// An app that never registered.
		const unregistered = await fetch(authorizationUrl(issuer, { clientId: 'no-such-app', redirectUri: target.url, challenge: pair.challenge }), noFollow);
		expect(unregistered.status).toBe(400);
		expect(unregistered.headers.get('location')).toBeNull();
		// A token for another resource: refused to the app's redirect URI with invalid_target.
		const otherResource = await fetch(authorizationUrl(issuer, { clientId, redirectUri: target.url, challenge: pair.challenge, resource: 'https://other.example/mcp' }), noFollow);
		expect(new URL(String(otherResource.headers.get('location'))).searchParams.get('error')).toBe('invalid_target');
		// Without PKCE: refused.
		const url = authorizationUrl(issuer, { clientId, redirectUri: target.url, challenge: pair.challenge });
		url.searchParams.delete('code_challenge');
		url.searchParams.delete('code_challenge_method');
		const noPkce = await fetch(url, noFollow);
		expect(new URL(String(noPkce.headers.get('location'))).searchParams.get('error')).toBe('invalid_request');

		// A real code: with the wrong verifier refused; with the right one, once; the second time refused, and the tokens of the first ended.
		const landed = await (await signInWithBrowser(chrome, target, fillKey(sandbox.keys.pro)))(authorizationUrl(issuer, { clientId, redirectUri: target.url, challenge: pair.challenge }));
		expect(landed.get('iss')).toBe(issuer);
		const code = String(landed.get('code'));
		secrets.push(code);
		const exchange = (verifier: string) => tokenEndpoint(issuer, 'token', { grant_type: 'authorization_code', code, redirect_uri: target.url, code_verifier: verifier, client_id: clientId });
		// Whoever holds the code without the app's verifier gets nothing.
		expect(await exchange(pkcePair().verifier)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
		const once = await exchange(pair.verifier);
		expect(once.status).toBe(200);
		secrets.push(String(once.body.access_token), String(once.body.refresh_token));
		expect((await mcpWith(server.url, String(once.body.access_token))).status).toBe(200);
		// The code a second time: refused, and the tokens the first use got are ended with it.
		expect(await exchange(pair.verifier)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
		expect((await mcpWith(server.url, String(once.body.access_token))).status).toBe(401);
		// A token of this server's shape that it never issued.
		expect((await mcpWith(server.url, 'A'.repeat(43))).status).toBe(401);
		// One lookup: the sign-in's key check. Nothing else reached the service.
		expect(counts(sandbox).requests - before).toBe(1);
	});

	it('only safe redirects: registration refuses plain http to another host with the reason (DCR and a metadata document); the page names the app by its host', async () => {
		await onlySafeRedirects(oneProcess());
	});

	it('only what is used: the metadata lists code+PKCE, refresh, public clients, revocation; secrets, PAR and OpenID are refused; every answer is no-store and unframeable', async () => {
		await onlyWhatIsUsed(oneProcess());
	});

	it('nothing usable at rest: after a sign-in, a refresh and revocations, no file in the records folder holds a token, a code or a registration token', async () => {
		const registered = await registerRaw(issuer, target.url);
		const clientId = String(registered.body.client_id);
		const registrationToken = String(registered.body.registration_access_token);
		expect(registrationToken.length).toBeGreaterThan(20);
		const pair = pkcePair();
		const landed = await (await signInWithBrowser(chrome, target, fillKey(sandbox.keys.pro)))(authorizationUrl(issuer, { clientId, redirectUri: target.url, challenge: pair.challenge }));
		const code = String(landed.get('code'));
		const first = await tokenEndpoint(issuer, 'token', { grant_type: 'authorization_code', code, redirect_uri: target.url, code_verifier: pair.verifier, client_id: clientId });
		const refreshed = await tokenEndpoint(issuer, 'token', { grant_type: 'refresh_token', refresh_token: String(first.body.refresh_token), client_id: clientId });
		expect(refreshed.status).toBe(200);
		const live = [code, registrationToken, first.body.access_token, first.body.refresh_token, refreshed.body.access_token, refreshed.body.refresh_token].map(String);
		secrets.push(...live);
		// While they are live, and after the access token is revoked: every record, every byte.
		const allRecords = () => filesUnder(folder).map((file) => readFileSync(file, 'utf8')).join('\n');
		expect(leaks(allRecords(), secrets)).toEqual([]);
		expect((await mcpWith(server.url, String(refreshed.body.access_token))).status).toBe(200);
		expect((await tokenEndpoint(issuer, 'revoke', { token: String(refreshed.body.access_token), client_id: clientId })).status).toBe(200);
		expect((await mcpWith(server.url, String(refreshed.body.access_token))).status).toBe(401);
		expect(leaks(allRecords(), secrets)).toEqual([]);
	});

	it('throttled: key checks bounded per address and window, the page says why and sends nothing past the bound; refusals in /metrics; each event one log line with who, which app, which replica', async () => {
		const clientId = await registerApp(issuer, target.url, 'Guesser');
		const pair = pkcePair();
		const context = await chrome.newContext();
		try {
			const page = await context.newPage();
			await page.goto(authorizationUrl(issuer, { clientId, redirectUri: target.url, challenge: pair.challenge }).toString());
			const post = async (apiKey: string) => {
				await fillKey(apiKey)(page);
				const [answer] = await Promise.all([page.waitForResponse((response) => response.request().method() === 'POST'), page.getByRole('button', { name: 'Allow' }).click()]);
				return { status: answer.status(), says: String(await page.getByRole('alert').textContent()) };
			};
			// The window (3 s and 5 checks in this test, 15 min and 10 by default) starts clean.
			await new Promise((resolve) => setTimeout(resolve, 3_100));
			const before = counts(sandbox).requests;
			for (let i = 0; i < 5; i++) expect(await post(`omni_wrong_${i}`)).toMatchObject({ status: 401, says: expect.stringContaining('did not accept this API key') });
			expect(counts(sandbox).requests - before).toBe(5);
			// Past the bound: refused with why and for how long, the service not asked, even for the right key.
			expect(await post('omni_wrong_5')).toMatchObject({ status: 429, says: expect.stringContaining('checked as many keys from your network') });
			expect(await post(sandbox.keys.pro)).toMatchObject({ status: 429 });
			expect(counts(sandbox).requests - before).toBe(5);
			const scraped = await (await fetch(`${issuer}/metrics`)).text();
			expect(Number(/omni_video_mcp_sign_in_refusals_total\{reason="key_checks_address"\} (\d+)/.exec(scraped)?.[1])).toBeGreaterThanOrEqual(2);
			expect(Number(/omni_video_mcp_sign_in_refusals_total\{reason="wrong_key"\} (\d+)/.exec(scraped)?.[1])).toBeGreaterThanOrEqual(5);
			// The window over, the right key goes through.
			await new Promise((resolve) => setTimeout(resolve, 3_100));
			await fillKey(sandbox.keys.pro)(page);
			await Promise.all([page.waitForURL((url) => url.toString().startsWith(target.url)), page.getByRole('button', { name: 'Allow' }).click()]);
			expect(counts(sandbox).requests - before).toBe(6);
		} finally {
			await context.close();
		}
		// What happened so far in this describe, one line each: who by key fingerprint, which app, which replica.
		const log = server.log();
		for (const line of [/sign-in: key \S+ signed in from \S+ with app Guesser \(\S+\), on replica \S+/, /sign-in: refused \(wrong_key\) from \S+ for app Guesser/, /sign-in: refused \(key_checks_address\)/, /sign-in: grant for key \S+ by app Claude/, /sign-in: refresh for key \S+ by app Claude/, /sign-in: refresh reuse for key \S+ by app Claude/, /sign-in: revocation for key \S+ by app/])
			expect(log).toMatch(line);
		const scraped = await (await fetch(`${issuer}/metrics`)).text();
		for (const event of ['sign_in', 'grant', 'refresh', 'refresh_reuse', 'revocation']) expect(scraped).toMatch(new RegExp(`omni_video_mcp_sign_in_events_total\\{event="${event}"\\} [1-9]`));
	});

	it('key checks bounded per address and in all, behind a trusted proxy: the journal holds exactly the bound of credential lookups, none past it (the right key included); the page says which bound; /metrics counts each refusal by reason', async () => {
		// A server of its own (its own records and counters), behind a proxy it trusts: 3 checks an address, 5 in all, a window longer than the test.
		const port = await freePort();
		const guarded = `http://127.0.0.1:${port}`;
		const { OMNI_VIDEO_API_KEY: _key, ...env } = serverEnv(sandbox, { OMNI_VIDEO_MCP_STATE_DIR: stateDir(), OMNI_VIDEO_MCP_SECRET: SIGN_IN_SECRET, OMNI_VIDEO_MCP_TRUST_PROXY: '1', OMNI_VIDEO_MCP_SIGN_IN_LIMITS: 'window=60,key-checks=3,key-checks-all=5' });
		const other = await httpServer(env, ['--public-url', guarded], port);
		try {
			const url = authorizationUrl(guarded, { clientId: await registerApp(guarded, target.url, 'Guesser'), redirectUri: target.url, challenge: pkcePair().challenge });
			const before = counts(sandbox).requests;
			const base = credentialLookups(sandbox);
			// One address: three wrong keys, one lookup each; then a wrong key and the right one, refused unchecked.
			const one = await typeKeys(chrome, url, '198.51.100.31', ['omni_wrong_0', 'omni_wrong_1', 'omni_wrong_2', 'omni_wrong_3', sandbox.keys.pro], sandbox);
			expect(one.map(({ status, lookups }) => [status, lookups - base])).toEqual([[401, 1], [401, 2], [401, 3], [429, 3], [429, 3]]);
			for (const refused of one.slice(3)) expect(refused.says).toContain('This server has checked as many keys from your network as it does in one window');
			// Another address: two checks more make five in all; then the bound in all holds it, and a third address's right key.
			const two = await typeKeys(chrome, url, '198.51.100.32', ['omni_wrong_4', 'omni_wrong_5', 'omni_wrong_6'], sandbox);
			const three = await typeKeys(chrome, url, '198.51.100.33', [sandbox.keys.pro], sandbox);
			expect([...two, ...three].map(({ status, lookups }) => [status, lookups - base])).toEqual([[401, 4], [401, 5], [429, 5], [429, 5]]);
			for (const refused of [two[2], three[0]]) expect(refused.says).toContain('This server has checked as many keys as it does in one window');
			// Nothing but those five lookups reached the service.
			expect(counts(sandbox).requests - before).toBe(5);
			const refusals = async (reason: string) => counted([other.url], `omni_video_mcp_sign_in_refusals_total{reason="${reason}"}`);
			expect([await refusals('wrong_key'), await refusals('key_checks_address'), await refusals('key_checks_all')]).toEqual([5, 2, 2]);
			expect(other.log()).toMatch(/sign-in: refused \(key_checks_all\) from 198\.51\.100\.33 for app Guesser/);
			expect(leaks(other.log(), secrets)).toEqual([]);
		} finally {
			await other.stop();
		}
	});

	it('a token for another server on the same records is refused; an expired token is refused', async () => {
		// A second server, another resource, on the same folder and secret; its tokens last 10 s.
		const port = await freePort();
		const otherIssuer = `http://127.0.0.1:${port}`;
		const { OMNI_VIDEO_API_KEY: _key, ...env } = serverEnv(sandbox, { OMNI_VIDEO_MCP_STATE_DIR: folder, OMNI_VIDEO_MCP_SECRET: SIGN_IN_SECRET, OMNI_VIDEO_MCP_ACCESS_TOKEN_SECONDS: '10' });
		const other = await httpServer(env, ['--public-url', otherIssuer], port);
		try {
			const auth = new AppAuth(target.url, 'Claude');
			const app = await connectApp(other.url, auth, 'modern', await signInWithBrowser(chrome, target, fillKey(sandbox.keys.pro)));
			await app.client.close();
			const token = String(auth.saved?.access_token);
			secrets.push(token, auth.saved?.refresh_token);
			const before = counts(sandbox).requests;
			const elsewhere = await mcpWith(server.url, token);
			expect(elsewhere.status).toBe(401);
			expect(elsewhere.body).toContain(`issued for ${otherIssuer}/mcp`);
			await new Promise((resolve) => setTimeout(resolve, 11_000));
			const expired = await mcpWith(other.url, token);
			expect(expired.status).toBe(401);
			expect(expired.challenge).toContain('error="invalid_token"');
			expect(counts(sandbox).requests - before).toBe(0);
			// The app refreshes, as the SDK does on that 401, and goes on.
			const again = await connectSignedIn(other.url, auth, 'modern');
			await again.client.listTools();
			await again.client.close();
			expect(auth.saved?.access_token).not.toBe(token);
			secrets.push(auth.saved?.access_token, auth.saved?.refresh_token);
			expect(leaks(other.log(), secrets)).toEqual([]);
		} finally {
			await other.stop();
		}
	});

	it('a team on one process (its records folder): each member holds their own work; a cap set after spending holds at once', async () => {
		const port = await freePort();
		const teamFolder = stateDir();
		// The team's key stays on the server; members sign in with a name and a code.
		const team = await httpServer(serverEnv(sandbox, { OMNI_VIDEO_MCP_STATE_DIR: teamFolder, OMNI_VIDEO_MCP_SECRET: SIGN_IN_SECRET }), ['--public-url', `http://127.0.0.1:${port}`, '--sign-in', 'team'], port);
		const teamSecrets = [...secrets];
		try {
			await membersHoldTheirOwnWork({ url: team.url, sandbox, chrome, target, members: membersOn(['--state-dir', teamFolder]), secrets: teamSecrets });
			expect(leaks(team.log(), teamSecrets)).toEqual([]);
		} finally {
			await team.stop();
		}
	});
});

/**
 * Three replicas on one Redis behind the round-robin proxy, signing in at the proxy's address, with a
 * browser and the app's redirect target; every line they wrote checked for the secrets at the end.
 */
function replicasOnRedis(reading: 'default' | 'spec', signIn: 'own-key' | 'team') {
	const team = {
		sandbox: undefined as unknown as Sandbox,
		redis: undefined as unknown as RedisServer & { port: number },
		proxy: undefined as unknown as Proxy,
		replicas: [] as HttpServer[],
		issuer: '',
		chrome: undefined as unknown as Browser,
		target: undefined as unknown as RedirectTarget,
		secrets: [] as (string | undefined)[],
		/** Apps' metadata documents on this machine: one naming `target`, one naming http://evil.example/cb. */
		metadataHosts: [] as Awaited<ReturnType<typeof clientMetadataHost>>[],
	};
	beforeAll(async () => {
		team.sandbox = await sandboxFor(reading, { insecureCallbacks: true });
		team.redis = await startRedis();
		team.proxy = await startProxy(() => team.replicas.map((replica) => replica.url));
		team.issuer = team.proxy.url.replace(/\/mcp$/, '');
		team.target = await redirectTarget();
		const certificate = testCertificate();
		team.metadataHosts.push(await clientMetadataHost(certificate, team.target.url, 'ChatGPT'), await clientMetadataHost(certificate, 'http://evil.example/cb', 'Unsafe App'));
		// A team's replicas hold its key; people's own keys come with their sign-in.
		// The round-robin proxy stands for the operator's, so the replicas trust its X-Forwarded-For; short locks, so that the throttle's cases do not wait long.
		// The apps' metadata documents are let past the private-address check by the test's preload, as on one process.
		const { OMNI_VIDEO_MCP_STATE_DIR: _dir, OMNI_VIDEO_API_KEY: key, ...env } = serverEnv(team.sandbox, {
			OMNI_VIDEO_MCP_SECRET: SIGN_IN_SECRET,
			OMNI_VIDEO_MCP_TRUST_PROXY: '1',
			OMNI_VIDEO_MCP_SIGN_IN_LIMITS: 'failures=3,lock=2',
			NODE_OPTIONS: `--require ${join(__dirname, 'support', 'loopbackClientMetadata.cjs')}`,
			OMNI_VIDEO_TEST_METADATA_ORIGIN: team.metadataHosts.map((host) => new URL(host.url).origin).join(','),
			NODE_EXTRA_CA_CERTS: certificate.certFile,
		});
		const replicaEnv = signIn === 'team' ? { ...env, OMNI_VIDEO_API_KEY: key } : env;
		team.replicas.push(...(await Promise.all([0, 1, 2].map(() => httpServer(replicaEnv, ['--redis', team.redis.url, '--public-url', team.issuer, '--sign-in', signIn])))));
		team.chrome = await browser();
		team.secrets.push(team.sandbox.keys.pro, SIGN_IN_SECRET);
	});
	afterAll(async () => {
		for (const replica of team.replicas) expect(leaks(replica.log(), team.secrets)).toEqual([]);
		await team.chrome?.close();
		await team.target?.close();
		await Promise.all(team.metadataHosts.map((host) => host.close()));
		await Promise.all(team.replicas.map((replica) => replica.stop()));
		await team.proxy?.close();
		await team.redis?.stop();
		await team.sandbox?.close();
	});
	return team;
}

/**
 * A sign-in by hand (the page in the browser, registered by DCR), its code exchanged, its refresh
 * token used, and the new one revoked: every code and token of it among the team's secrets.
 */
async function signInRefreshRevoke(team: ReturnType<typeof replicasOnRedis>, fill: (page: Page) => Promise<void>): Promise<void> {
	const { issuer, target } = team;
	const registered = await registerRaw(issuer, target.url);
	const clientId = String(registered.body.client_id);
	const pair = pkcePair();
	const landed = await (await signInWithBrowser(team.chrome, target, fill))(authorizationUrl(issuer, { clientId, redirectUri: target.url, challenge: pair.challenge }));
	const code = String(landed.get('code'));
	const first = await tokenEndpoint(issuer, 'token', { grant_type: 'authorization_code', code, redirect_uri: target.url, code_verifier: pair.verifier, client_id: clientId });
	const refreshed = await tokenEndpoint(issuer, 'token', { grant_type: 'refresh_token', refresh_token: String(first.body.refresh_token), client_id: clientId });
	expect(refreshed.status).toBe(200);
	expect((await tokenEndpoint(issuer, 'revoke', { token: String(refreshed.body.refresh_token), client_id: clientId })).status).toBe(200);
	team.secrets.push(...[code, registered.body.registration_access_token, first.body.access_token, first.body.refresh_token, refreshed.body.access_token, refreshed.body.refresh_token].map(String));
}

/** Every key and every value in the team's Redis (SCAN): sign-in's records are there, and none holds a secret of the run. */
async function nothingUsableOnRedis(team: ReturnType<typeof replicasOnRedis>): Promise<void> {
	const redis = createClient({ url: team.redis.url });
	await redis.connect();
	try {
		let everything = '';
		for await (const keys of redis.scanIterator({ COUNT: 1000 })) for (const key of keys as string[]) everything += `${key}\n${(await redis.type(key)) === 'string' ? await redis.get(key) : ''}\n`;
		expect(everything).toContain('oauth:');
		expect(leaks(everything, team.secrets)).toEqual([]);
	} finally {
		await redis.close();
	}
}

/** Replicas on Redis, as the checks shared with the one-process layout see them: `fill` signs a person in, with `lookupsPerSignIn` lookups. */
const onReplicas = (team: ReturnType<typeof replicasOnRedis>, fill: (page: Page) => Promise<void>, lookupsPerSignIn: number): AuthServerUnderTest => ({
	issuer: team.issuer,
	replicas: team.replicas.length,
	chrome: team.chrome,
	target: team.target,
	metadata: { safe: team.metadataHosts[0].url, unsafe: team.metadataHosts[1].url },
	fill,
	lookupsPerSignIn,
	requests: () => counts(team.sandbox).requests,
	secrets: team.secrets,
});

/** The admin's members CLI on these records, with what it shows the admin and what it logs. */
const membersOn =
	(storeArgs: string[]) =>
	(...args: string[]): { shown: string; logged: string } => {
		const ran = spawnSync(process.execPath, [CLI, 'members', ...args, ...storeArgs], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
		if (ran.status !== 0) throw new Error(`members ${args.join(' ')} exited ${ran.status}: ${ran.stderr}`);
		return { shown: ran.stdout, logged: ran.stderr };
	};

/**
 * Issue 63 on a team's server, wherever it runs: each member holds their own work (another's job,
 * or none, is "not yours" alike, with 0 requests; the same arguments are their own new job), the
 * admin sees every member's jobs, their last sign-in and apps, and a cap set after spending holds
 * at once (a 4K of 10 s, its price unknown, refused with 0 requests). Each member change logs one
 * line, without a code.
 */
async function membersHoldTheirOwnWork(setup: { url: string; sandbox: Sandbox; chrome: Browser; target: RedirectTarget; members: ReturnType<typeof membersOn>; secrets: (string | undefined)[] }): Promise<void> {
	const { url, sandbox, chrome, target, members, secrets } = setup;
	const added = ['rhea', 'tomas'].map((name) => members('add', name));
	const [rheaCode, tomasCode] = added.map(({ shown }) => String(/sign-in code[^:]*: (\S+)/.exec(shown)?.[1]));
	secrets.push(rheaCode, tomasCode);
	const rheaAuth = new AppAuth(target.url, 'Claude');
	const tomasAuth = new AppAuth(target.url, 'ChatGPT');
	const rhea = await connectApp(url, rheaAuth, 'modern', await signInWithBrowser(chrome, target, fillMember('rhea', rheaCode)));
	const tomas = await connectApp(url, tomasAuth, 'legacy', await signInWithBrowser(chrome, target, fillMember('tomas', tomasCode)));
	secrets.push(rheaAuth.saved?.access_token, rheaAuth.saved?.refresh_token, tomasAuth.saved?.access_token, tomasAuth.saved?.refresh_token);
	try {
		const kite = { prompt: 'Rhea\'s own kite', resolution: '720P', duration: 4, waitSeconds: 40 };
		const made = await rhea.client.callTool({ name: 'generate_video', arguments: kite });
		expect(made.structuredContent).toMatchObject({ status: 'done' });
		const jobId = String(made.structuredContent?.jobId);
		const videoUrl = String(made.structuredContent?.videoUrl);

		// Tomas with Rhea's job id, and with one that does not exist: the same refusal, nothing sent.
		const before = counts(sandbox).requests;
		const refusals: string[] = [];
		for (const id of [jobId, 'job_not_made_by_anyone']) {
			for (const name of ['get_job', 'wait_for_job']) {
				const answer = await tomas.client.callTool({ name, arguments: { jobId: id, ...(name === 'wait_for_job' ? { waitSeconds: 5 } : {}) } });
				expect(answer.isError).toBe(true);
				expect(answer.structuredContent?.videoUrl).toBeUndefined();
				expect(JSON.stringify(answer)).not.toContain(videoUrl);
				refusals.push(JSON.stringify(answer.content).replaceAll(id, 'JOB'));
			}
		}
		expect(refusals[0]).toContain('is not one of yours');
		expect(new Set(refusals).size).toBe(1);
		expect(counts(sandbox).requests - before).toBe(0);
		// Rhea reads her own.
		expect((await rhea.client.callTool({ name: 'get_job', arguments: { jobId } })).structuredContent).toMatchObject({ status: 'done', videoUrl });

		// Tomas's same arguments are his own request: a new job, not Rhea's from the records; and his is not hers to read.
		const creates = counts(sandbox).creates;
		const his = await tomas.client.callTool({ name: 'generate_video', arguments: kite });
		expect(his.structuredContent).toMatchObject({ status: 'done' });
		expect(his.structuredContent?.jobId).not.toBe(jobId);
		expect(his.structuredContent?.retried).toBeUndefined();
		expect(counts(sandbox).creates).toBe(creates + 1);
		const hisId = String(his.structuredContent?.jobId);
		expect((await rhea.client.callTool({ name: 'get_job', arguments: { jobId: hisId } })).isError).toBe(true);

		// The admin sees every member's jobs, their last sign-in and the apps they use.
		expect(members('jobs', 'rhea').shown).toMatch(new RegExp(`rhea made 1 job\\(s\\):\\n  ${jobId} `));
		expect(members('jobs', 'tomas').shown).toContain(hisId);
		expect(members('jobs', 'tomas').shown).not.toContain(jobId);
		const listed = members('list').shown;
		expect(listed).toMatch(/rhea: .*, 1 job\(s\) made, latest \S+ at \S+; last sign-in \S+ from Claude, apps: Claude \(\S+\)\n/);
		expect(listed).toMatch(/tomas: .*, 1 job\(s\) made, latest \S+ at \S+; last sign-in \S+ from ChatGPT, apps: ChatGPT \(\S+\)\n/);

		// Tomas spent with no cap of his own; capped at 1 credit now, his next create is refused, whatever
		// its price (a 4K of 10 s, which nobody has made yet): nothing sent.
		const capped = members('cap', 'tomas', '1');
		const beforeCap = counts(sandbox).requests;
		const refused = await tomas.client.callTool({ name: 'generate_video', arguments: { prompt: 'Tomas\'s kite after his cap', resolution: '4K', duration: 10, waitSeconds: 5 } });
		expect(refused.isError).toBe(true);
		expect(JSON.stringify(refused.content)).toContain('your own cap as a member of the team is 1 credits');
		expect(counts(sandbox).requests - beforeCap).toBe(0);

		// One log line for each change, and no code in any.
		const removed = ['rhea', 'tomas'].map((name) => members('remove', name));
		const logged = [...added, capped, ...removed].map(({ logged: lines }) => lines.trim());
		expect(logged).toEqual([
			'omni-video-mcp members: added rhea, no cap of their own',
			'omni-video-mcp members: added tomas, no cap of their own',
			"omni-video-mcp members: tomas's own cap set to 1 credits / 24 h",
			'omni-video-mcp members: removed rhea',
			'omni-video-mcp members: removed tomas',
		]);
		expect(leaks(logged.join('\n'), [rheaCode, tomasCode])).toEqual([]);
	} finally {
		await rhea.client.close();
		await tomas.client.close();
	}
}

/** The replicas that served these requests of the proxy's. */
const servedBy = (requests: Proxy['requests'], which: (request: Proxy['requests'][number]) => boolean) => new Set(requests.filter(which).map((request) => request.replica));

describeSignIn('Claude.ai and ChatGPT with people\'s own keys over three replicas on Redis behind round robin, --service default', () => {
	const team = replicasOnRedis('default', 'own-key');

	it('a person signs in across replicas; the key sealed on one is opened on every other; refresh and revocation hold on all', async () => {
		const { proxy, sandbox, issuer } = team;
		const auth = new AppAuth(team.target.url, 'Claude');
		const from = proxy.requests.length;
		const app = await connectApp(proxy.url, auth, 'modern', await signInWithBrowser(team.chrome, team.target, fillKey(sandbox.keys.pro)));
		team.secrets.push(auth.saved?.access_token, auth.saved?.refresh_token);
		try {
			const made = await app.client.callTool({ name: 'generate_video', arguments: { prompt: 'A kite over three replicas', resolution: '720P', duration: 4, waitSeconds: 40 } });
			expect(made.structuredContent).toMatchObject({ status: 'done' });
			for (let i = 0; i < 2; i++) {
				const looked = await app.client.callTool({ name: 'get_job', arguments: { jobId: String(made.structuredContent?.jobId) } });
				expect(looked.structuredContent).toMatchObject({ status: 'done' });
			}
		} finally {
			await app.client.close();
		}
		const during = proxy.requests.slice(from);
		expect(servedBy(during, (request) => /^\/(oauth|signin)\//.test(request.path)).size).toBeGreaterThan(1);
		// Each replica that ran a call opened the key another sealed at sign-in.
		expect(servedBy(during, (request) => request.method === 'tools/call').size).toBeGreaterThan(1);

		const clientId = String(auth.registered?.client_id);
		const first = auth.saved!;
		const before = counts(sandbox).requests;
		const refreshed = await tokenEndpoint(issuer, 'token', { grant_type: 'refresh_token', refresh_token: String(first.refresh_token), client_id: clientId });
		expect(refreshed.status).toBe(200);
		const access = String(refreshed.body.access_token);
		team.secrets.push(access, String(refreshed.body.refresh_token));
		const probe = proxy.requests.length;
		for (let i = 0; i < 3; i++) expect((await mcpWith(proxy.url, access)).status).toBe(200);
		expect(servedBy(proxy.requests.slice(probe), () => true).size).toBe(3);
		// Revoked through whichever replica: refused by all three at once.
		expect((await tokenEndpoint(issuer, 'revoke', { token: access, client_id: clientId })).status).toBe(200);
		for (let i = 0; i < 3; i++) expect((await mcpWith(proxy.url, access)).status).toBe(401);
		// The first refresh token again, on another replica: refused, its grant ended.
		expect(await tokenEndpoint(issuer, 'token', { grant_type: 'refresh_token', refresh_token: String(first.refresh_token), client_id: clientId })).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
		expect(counts(sandbox).requests - before).toBe(0);
	});

	it('nothing usable at rest on Redis: no key or value holds a token, code or registration token; registrations bounded per address across replicas (behind a trusted proxy)', async () => {
		const { proxy, issuer, target } = team;
		await signInRefreshRevoke(team, fillKey(team.sandbox.keys.pro));
		// Every key and every value in the Redis (this and the earlier sign-ins' tokens among the secrets).
		await nothingUsableOnRedis(team);

		// Registrations: 20 a window from one address, counted by every replica as one; another address is not held.
		const from = proxy.requests.length;
		const statuses: number[] = [];
		for (let i = 0; i < 21; i++) statuses.push((await registerRaw(issuer, target.url, { headers: { 'x-forwarded-for': '198.51.100.7' } })).status);
		expect(statuses.filter((status) => status === 201)).toHaveLength(20);
		expect(statuses.at(-1)).toBe(429);
		expect(servedBy(proxy.requests.slice(from), (request) => request.path === '/oauth/register').size).toBe(3);
		const refused = await registerRaw(issuer, target.url, { headers: { 'x-forwarded-for': '198.51.100.7' } });
		expect(refused).toMatchObject({ status: 429, body: { error: 'temporarily_unavailable', error_description: expect.stringContaining('Too many apps registered') } });
		expect((await registerRaw(issuer, target.url, { headers: { 'x-forwarded-for': '198.51.100.8' } })).status).toBe(201);
	});

	it('only safe redirects on every replica (--service default): registration refuses http://evil.example/cb with the reason, DCR and a metadata document alike; the page names the app by its host', async () => {
		await onlySafeRedirects(onReplicas(team, fillKey(team.sandbox.keys.pro), 1));
	});

	it('only what is used on every replica (--service default): the same metadata everywhere, secrets, PAR and OpenID refused, every answer no-store and unframeable', async () => {
		await onlyWhatIsUsed(onReplicas(team, fillKey(team.sandbox.keys.pro), 1));
	});

	it('key checks bounded per address across replicas: 10 wrong keys from one address are 10 lookups, the 11th try (the right key) is refused unchecked, whichever replica it reaches', async () => {
		const { proxy, sandbox, issuer, target } = team;
		const url = authorizationUrl(issuer, { clientId: await registerApp(issuer, target.url, 'Guesser'), redirectUri: target.url, challenge: pkcePair().challenge });
		const base = credentialLookups(sandbox);
		const from = proxy.requests.length;
		// The default bound (10 an address and window); the tries from one address go round the three replicas.
		const tries = await typeKeys(team.chrome, url, '198.51.100.40', [...Array.from({ length: 10 }, (_, i) => `omni_wrong_${i}`), sandbox.keys.pro], sandbox);
		expect(tries.map(({ status, lookups }) => [status, lookups - base])).toEqual([...Array.from({ length: 10 }, (_, i) => [401, i + 1]), [429, 10]]);
		expect(tries[10].says).toContain('This server has checked as many keys from your network as it does in one window');
		expect(servedBy(proxy.requests.slice(from), (request) => request.path.startsWith('/signin/')).size).toBe(3);
		expect(await counted(team.replicas.map((replica) => replica.url), 'omni_video_mcp_sign_in_refusals_total{reason="key_checks_address"}')).toBe(1);
	});
});

describeSignIn('Claude.ai and ChatGPT for a team: members of the team key, three replicas on Redis behind round robin, --service spec', () => {
	const team = replicasOnRedis('spec', 'team');
	const members = (...args: string[]) => execFileSync(process.execPath, [CLI, 'members', ...args, '--redis', team.redis.url], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });

	it('an admin adds members; one signs in across replicas and makes a video; one over their cap is refused; a removed member is refused on every replica', async () => {
		const alice = /sign-in code[^:]*: (\S+)/.exec(members('add', 'alice'))?.[1];
		const bob = /sign-in code[^:]*: (\S+)/.exec(members('add', 'bob', '--cap', '1'))?.[1];
		expect(alice).toMatch(/^ovm_/);
		team.secrets.push(alice, bob);
		expect(() => members('add', 'alice')).toThrow(/a member already/);

		// A wrong code: refused with the reason, nothing stored.
		const auth = new AppAuth(team.target.url, 'Claude');
		const wrong = await connectApp(team.proxy.url, new AppAuth(team.target.url, 'Claude'), 'legacy', await signInWithBrowser(team.chrome, team.target, fillMember('alice', 'ovm_wrong'))).catch((error: unknown) => error);
		expect(String(wrong)).toContain('That member name and sign-in code do not match');

		const from = team.proxy.requests.length;
		const app = await connectApp(team.proxy.url, auth, 'legacy', await signInWithBrowser(team.chrome, team.target, fillMember('alice', String(alice))));
		team.secrets.push(auth.saved?.access_token, auth.saved?.refresh_token);
		// The sign-in's steps went to more than one replica: each read what another wrote.
		expect(servedBy(team.proxy.requests.slice(from), (request) => /^\/(oauth|signin)\//.test(request.path)).size).toBeGreaterThan(1);
		try {
			const made = await app.client.callTool({ name: 'generate_video', arguments: { prompt: 'A team kite', resolution: '720P', duration: 4, waitSeconds: 40 } });
			expect(made.structuredContent).toMatchObject({ status: 'done' });
			expect(members('list')).toMatch(new RegExp(`alice: .*no cap of their own, 1 job\\(s\\) made, latest ${String(made.structuredContent?.jobId)}`));
		} finally {
			await app.client.close();
		}

		// Bob's own cap is 1 credit: his first video is let through alone (its price is not known yet, as
		// with a key's cap), the next is refused before anything is sent.
		const bobAuth = new AppAuth(team.target.url, 'ChatGPT');
		const bobApp = await connectApp(team.proxy.url, bobAuth, 'modern', await signInWithBrowser(team.chrome, team.target, fillMember('bob', String(bob))));
		team.secrets.push(bobAuth.saved?.access_token, bobAuth.saved?.refresh_token);
		try {
			const first = await bobApp.client.callTool({ name: 'generate_video', arguments: { prompt: 'Bob first kite', resolution: '720P', duration: 4, waitSeconds: 40 } });
			expect(first.structuredContent).toMatchObject({ status: 'done' });
			const before = counts(team.sandbox).requests;
			const refused = await bobApp.client.callTool({ name: 'generate_video', arguments: { prompt: 'A kite too many', resolution: '720P', duration: 4, waitSeconds: 5 } });
			expect(refused.isError).toBe(true);
			expect(JSON.stringify(refused.content)).toContain('your own cap as a member of the team is 1 credits');
			expect(counts(team.sandbox).requests - before).toBe(0);
		} finally {
			await bobApp.client.close();
		}

		// Alice removed: her token and her refresh token are refused at once, on every replica.
		expect(members('remove', 'alice')).toContain('Removed alice');
		const before = counts(team.sandbox).requests;
		for (let i = 0; i < 3; i++) expect((await mcpWith(team.proxy.url, String(auth.saved?.access_token))).status).toBe(401);
		const refresh = await tokenEndpoint(team.issuer, 'token', { grant_type: 'refresh_token', refresh_token: String(auth.saved?.refresh_token), client_id: String(auth.registered?.client_id) });
		expect(refresh).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
		expect(counts(team.sandbox).requests - before).toBe(0);
		expect(members('list')).not.toContain('alice');
	});

	it('each member holds their own work across replicas: another\'s job is "not yours" with 0 requests; a cap set after spending holds at once; the admin sees each member\'s jobs, sign-ins and apps', async () => {
		await membersHoldTheirOwnWork({ url: team.proxy.url, sandbox: team.sandbox, chrome: team.chrome, target: team.target, members: membersOn(['--redis', team.redis.url]), secrets: team.secrets });
	});

	it('wrong codes lock a member name across replicas for a growing time, the page says so; the right code waits it out; the page says the key and credits are the team\'s; 0 requests', async () => {
		const quinn = String(/sign-in code[^:]*: (\S+)/.exec(members('add', 'quinn'))?.[1]);
		team.secrets.push(quinn);
		const before = counts(team.sandbox).requests;
		const clientId = await registerApp(team.issuer, team.target.url, 'Guesser');
		const pair = pkcePair();
		const context = await team.chrome.newContext();
		try {
			const page = await context.newPage();
			await page.goto(authorizationUrl(team.issuer, { clientId, redirectUri: team.target.url, challenge: pair.challenge }).toString());
			const main = String(await page.textContent('main'));
			expect(main).toContain('with your team’s Omni Video key');
			expect(main).toContain('the team’s credits');
			expect(main).not.toContain('your Omni Video account');
			const post = async (code: string) => {
				await fillMember('quinn', code)(page);
				const [answer] = await Promise.all([page.waitForResponse((response) => response.request().method() === 'POST'), page.getByRole('button', { name: 'Allow' }).click()]);
				return { status: answer.status(), says: String(await page.getByRole('alert').textContent()) };
			};
			const from = team.proxy.requests.length;
			// Three free wrong tries (this layout's setting), then each locks the name for longer.
			for (let i = 0; i < 3; i++) expect(await post(`ovm_wrong_${i}`)).toMatchObject({ status: 401, says: expect.not.stringContaining('locked') });
			expect(await post('ovm_wrong_3')).toMatchObject({ status: 401, says: expect.stringContaining('locked for') });
			// The right code while locked: refused unread, on whichever replica.
			expect(await post(quinn)).toMatchObject({ status: 429, says: expect.stringContaining('Too many wrong sign-in codes for this member name') });
			expect(servedBy(team.proxy.requests.slice(from), (request) => request.path.startsWith('/signin/')).size).toBeGreaterThan(1);
			let refusals = 0;
			for (const replica of team.replicas) refusals += Number(/omni_video_mcp_sign_in_refusals_total\{reason="member_locked"\} (\d+)/.exec(await (await fetch(replica.url.replace(/\/mcp$/, '/metrics'))).text())?.[1] ?? 0);
			expect(refusals).toBeGreaterThanOrEqual(1);
			// The lock over (2 s here; 30 s, doubling, by default): the right code goes through.
			await new Promise((resolve) => setTimeout(resolve, 2_100));
			await fillMember('quinn', quinn)(page);
			await Promise.all([page.waitForURL((url) => url.toString().startsWith(team.target.url)), page.getByRole('button', { name: 'Allow' }).click()]);
		} finally {
			await context.close();
		}
		expect(counts(team.sandbox).requests - before).toBe(0);
		expect(team.replicas.map((replica) => replica.log()).join('\n')).toMatch(/sign-in: member quinn signed in from \S+ with app Guesser \(\S+\), on replica \S+/);
	});

	/** A member added for one case: their code, among the secrets. */
	const addMember = (name: string) => {
		const code = String(/sign-in code[^:]*: (\S+)/.exec(members('add', name))?.[1]);
		team.secrets.push(code);
		return code;
	};

	it('only safe redirects on every replica (--service spec): registration refuses http://evil.example/cb with the reason, DCR and a metadata document alike; the page names the app by its host', async () => {
		await onlySafeRedirects(onReplicas(team, fillMember('uma', addMember('uma')), 0));
	});

	it('only what is used on every replica (--service spec): the same metadata everywhere, secrets, PAR and OpenID refused (a member asking for openid gets no ID token), every answer no-store and unframeable', async () => {
		await onlyWhatIsUsed(onReplicas(team, fillMember('vera', addMember('vera')), 0));
	});

	it('nothing usable at rest on Redis with members (--service spec); the operator sees a member\'s sign-in, grant, refresh and revocation, one line and one count each, across replicas; 0 requests', async () => {
		const before = counts(team.sandbox).requests;
		const events = ['sign_in', 'grant', 'refresh', 'revocation'];
		const urls = team.replicas.map((replica) => replica.url);
		const countedBefore = await Promise.all(events.map((event) => counted(urls, `omni_video_mcp_sign_in_events_total{event="${event}"}`)));
		await signInRefreshRevoke(team, fillMember('wren', addMember('wren')));
		await nothingUsableOnRedis(team);
		const log = team.replicas.map((replica) => replica.log()).join('\n');
		for (const line of [/sign-in: member wren signed in from \S+ with app An App \(\S+\), on replica \S+/, /sign-in: grant for member wren by app An App \(\S+\), on replica/, /sign-in: refresh for member wren by app An App/, /sign-in: revocation for member wren by app An App/]) expect(log).toMatch(line);
		const countedAfter = await Promise.all(events.map((event) => counted(urls, `omni_video_mcp_sign_in_events_total{event="${event}"}`)));
		expect(countedAfter.map((count, i) => count - countedBefore[i])).toEqual([1, 1, 1, 1]);
		expect(counts(team.sandbox).requests - before).toBe(0);
	});
});
