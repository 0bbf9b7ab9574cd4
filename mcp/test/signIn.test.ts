import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
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
	pkcePair,
	redirectTarget,
	registerApp,
	signInWithBrowser,
	testCertificate,
	tokenEndpoint,
	type RedirectTarget,
} from './support/signIn';
import { startProxy, startRedis, type Proxy, type RedisServer } from './support/team';

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

/** Whether a text holds any of these secrets. */
const leaks = (text: string, secrets: (string | undefined)[]) => secrets.filter((secret): secret is string => Boolean(secret) && text.includes(secret as string));

describeSignIn('Claude.ai and ChatGPT: people sign in with their own key (one process, its records folder)', () => {
	let sandbox: Sandbox;
	let server: HttpServer;
	let issuer: string;
	let folder: string;
	let chrome: Browser;
	let target: RedirectTarget;
	let metadataHost: Awaited<ReturnType<typeof clientMetadataHost>>;
	const secrets: (string | undefined)[] = [];

	beforeAll(async () => {
		sandbox = await sandboxFor('default', { insecureCallbacks: true });
		const port = await freePort();
		issuer = `http://127.0.0.1:${port}`;
		folder = stateDir();
		target = await redirectTarget();
		const certificate = testCertificate();
		metadataHost = await clientMetadataHost(certificate, target.url, 'ChatGPT');
		// No key in the server's environment: people bring their own at sign-in.
		const { OMNI_VIDEO_API_KEY: _key, ...env } = serverEnv(sandbox, {
			OMNI_VIDEO_MCP_STATE_DIR: folder,
			OMNI_VIDEO_MCP_SECRET: SIGN_IN_SECRET,
			// The app's metadata document is on this machine, behind a certificate of the test's own.
			OMNI_VIDEO_MCP_LOOPBACK_CLIENT_METADATA: '1',
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
		await server?.stop();
		await sandbox?.close();
	});

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
	};
	beforeAll(async () => {
		team.sandbox = await sandboxFor(reading, { insecureCallbacks: true });
		team.redis = await startRedis();
		team.proxy = await startProxy(() => team.replicas.map((replica) => replica.url));
		team.issuer = team.proxy.url.replace(/\/mcp$/, '');
		// A team's replicas hold its key; people's own keys come with their sign-in.
		const { OMNI_VIDEO_MCP_STATE_DIR: _dir, OMNI_VIDEO_API_KEY: key, ...env } = serverEnv(team.sandbox, { OMNI_VIDEO_MCP_SECRET: SIGN_IN_SECRET });
		const replicaEnv = signIn === 'team' ? { ...env, OMNI_VIDEO_API_KEY: key } : env;
		team.replicas.push(...(await Promise.all([0, 1, 2].map(() => httpServer(replicaEnv, ['--redis', team.redis.url, '--public-url', team.issuer, '--sign-in', signIn])))));
		team.chrome = await browser();
		team.target = await redirectTarget();
		team.secrets.push(team.sandbox.keys.pro, SIGN_IN_SECRET);
	});
	afterAll(async () => {
		for (const replica of team.replicas) expect(leaks(replica.log(), team.secrets)).toEqual([]);
		await team.chrome?.close();
		await team.target?.close();
		await Promise.all(team.replicas.map((replica) => replica.stop()));
		await team.proxy?.close();
		await team.redis?.stop();
		await team.sandbox?.close();
	});
	return team;
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
});
