import type { Browser } from 'playwright-core';
import type { Sandbox } from '../../sandbox';
import { counts, httpServer, sandboxFor, serverEnv, type HttpServer } from './support/mcpHarness';
import { AppAuth, browser, connectApp, freePort, redirectTarget, SECRET, signInWithBrowser, type RedirectTarget } from './support/signIn';

jest.setTimeout(120_000);

/**
 * Needs Chromium (Debian's), as a person's browser: in the team step of .ci/run (MCP_TEAM_TEST=1), which installs it.
 */
const describeSignIn = process.env.MCP_TEAM_TEST === '1' ? describe : describe.skip;

describeSignIn('Claude.ai and ChatGPT: an app signs in with OAuth, never with the key', () => {
	let sandbox: Sandbox;
	let server: HttpServer;
	let chrome: Browser;
	let target: RedirectTarget;

	beforeAll(async () => {
		sandbox = await sandboxFor('default', { insecureCallbacks: true });
		const port = await freePort();
		const { OMNI_VIDEO_API_KEY: _key, ...env } = serverEnv(sandbox, { OMNI_VIDEO_MCP_SECRET: SECRET });
		server = await httpServer(env, ['--public-url', `http://127.0.0.1:${port}`], port);
		chrome = await browser();
		target = await redirectTarget();
	});
	afterAll(async () => {
		await chrome?.close();
		await target?.close();
		await server?.stop();
		await sandbox?.close();
	});

	it('own key: discovery, registration, the sign-in page, code, token, a video', async () => {
		const auth = new AppAuth(target.url, 'Claude');
		const before = counts(sandbox).requests;
		const app = await connectApp(server.url, auth, 'modern', await signInWithBrowser(chrome, target, async (page) => {
			await page.getByLabel(/API key/).fill(sandbox.keys.pro);
			await page.getByLabel('Plan').selectOption('pro');
		}));
		try {
			expect(counts(sandbox).requests - before).toBe(1);
			const { tools } = await app.client.listTools();
			expect(tools.map((tool) => tool.name)).toContain('generate_video');
			const made = await app.client.callTool({ name: 'generate_video', arguments: { prompt: 'A kite', resolution: '720P', duration: 4, waitSeconds: 30 } });
			expect(made.structuredContent).toMatchObject({ status: 'done' });
			expect(server.log()).not.toContain(sandbox.keys.pro);
		} finally {
			await app.client.close();
		}
	});
});
