import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import type { Browser, Page } from 'playwright-core';
import type { Sandbox } from '../../sandbox';
import { CLI, httpServer, sandboxFor, serverEnv, type HttpServer } from './support/mcpHarness';
import { startRedis, type RedisServer } from './support/team';
import { readSettings, SettingsError } from '../src/settings';

jest.setTimeout(120_000);

/**
 * The job view (MCP Apps): what a client that renders views is offered, and what one that does
 * not is not; the view's own tool on the job's shared looks. With MCP_TEAM_TEST=1 (Debian's
 * Chromium and Redis, the team step of .ci/run): the view rendered by the SDK's AppBridge in
 * Chromium, from the server over HTTP, one server and three replicas on Redis, with the declared
 * CSP applied as a host applies it.
 */
const TEAM = process.env.MCP_TEAM_TEST === '1';
const UI = 'io.modelcontextprotocol/ui';
const MIME = 'text/html;profile=mcp-app';
const VIEW = 'ui://omni-video/job-view.html';
const INFO = { name: 'omni-video-view-test', version: '1.0.0' };
const LOGS: string[] = [];

type Era = 'modern' | 'legacy';

/** A measurement for the record (docs/mcp.md), beside the test's output. */
const report = (line: string) => void process.stderr.write(`appView: ${line}\n`);
type ViewClient = Client & { close(): Promise<void> };

/** A v2 client that renders views (it advertises the extension), in the era asked for. */
function viewClient(era: Era, views = true): ViewClient {
	return new Client(INFO, {
		versionNegotiation: { mode: era === 'modern' ? { pin: '2026-07-28' } : 'legacy' },
		capabilities: views ? { extensions: { [UI]: { mimeTypes: [MIME] } } } : {},
	} as ConstructorParameters<typeof Client>[1]) as ViewClient;
}

async function overHttp(url: string, era: Era, apiKey?: string): Promise<ViewClient> {
	const client = viewClient(era);
	await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: apiKey ? { Authorization: `Bearer ${apiKey}` } : {} } }));
	return client;
}

async function overStdio(env: Record<string, string>, era: Era, args: string[] = [], onLog: (text: string) => void = () => undefined): Promise<ViewClient> {
	const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, ...args], env, stderr: 'pipe' });
	(transport.stderr as NodeJS.ReadableStream | null)?.on('data', (chunk: Buffer) => onLog(chunk.toString('utf8')));
	const client = viewClient(era);
	await client.connect(transport);
	return client;
}

const tool = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult & { structuredContent?: Record<string, unknown> };

/** The service's lookups of one job, from the sandbox's own journal. */
const lookups = (sandbox: Sandbox, jobId: string) => sandbox.journal.filter((entry) => entry.method === 'GET' && entry.path === `/api/v1/jobs/${jobId}`).length;

/** What a client that renders views is offered: the view on the job tools, the view's tool for the app alone, the view itself. */
async function offered(client: Client, origin: string): Promise<{ html: string }> {
	const { tools } = (await client.listTools()) as { tools: Tool[] };
	const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
	expect(Object.keys(byName).sort()).toEqual(['follow_job', 'generate_video', 'get_job', 'upload_image', 'wait_for_job']);
	for (const name of ['generate_video', 'wait_for_job', 'get_job']) expect(byName[name]._meta).toMatchObject({ ui: { resourceUri: VIEW }, 'openai/outputTemplate': VIEW });
	expect(byName.follow_job._meta).toMatchObject({ ui: { resourceUri: VIEW, visibility: ['app'] } });
	// Ready for the directories: a title and all four hints stated on every tool.
	for (const t of tools) {
		expect(t.title).toEqual(expect.any(String));
		for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) expect(typeof t.annotations?.[hint]).toBe('boolean');
	}
	const read = await client.readResource({ uri: VIEW });
	const [content] = read.contents as { uri: string; mimeType?: string; text?: string; _meta?: Record<string, unknown> }[];
	expect(content.mimeType).toBe(MIME);
	expect(content._meta).toMatchObject({ ui: { csp: { resourceDomains: [origin], connectDomains: [] } }, 'openai/widgetCSP': { resource_domains: [origin], connect_domains: [] } });
	const html = content.text ?? '';
	// Self-contained: nothing loaded from anywhere.
	expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=|@import|url\(http/i);
	expect(html).toContain(JSON.stringify([origin]));
	return { html };
}

describe('the video origins the view declares', () => {
	const env = { OMNI_VIDEO_BASE_URL: 'https://api.example.com/v1' };
	it('are the API\'s own origin by default, the given ones as origins, and a wrong one stops the server', () => {
		expect(readSettings([], env).videoOrigins).toEqual(['https://api.example.com']);
		expect(readSettings(['--video-origin', 'https://cdn.example.com/videos/'], { ...env, OMNI_VIDEO_VIDEO_ORIGINS: 'https://b.example.com:8443, https://cdn.example.com' }).videoOrigins).toEqual(['https://cdn.example.com', 'https://b.example.com:8443']);
		expect(() => readSettings(['--video-origin', 'cdn.example.com'], env)).toThrow(SettingsError);
		expect(() => readSettings(['--video-origin', 'ftp://cdn.example.com'], env)).toThrow(/https origin/);
	});
});

describe('the job view (MCP Apps)', () => {
	let sandbox: Sandbox;
	beforeAll(async () => {
		sandbox = await sandboxFor('default');
	});
	afterAll(async () => {
		await sandbox?.close();
	});

	it.each(['modern', 'legacy'] as const)('over stdio, %s era: offered to a client that renders views; the view follows a job on its shared looks; an undeclared origin is said', async (era) => {
		let log = '';
		// Videos declared from elsewhere: this one's origin is not, and the server says so.
		const client = await overStdio(serverEnv(sandbox, { OMNI_VIDEO_VIDEO_ORIGINS: 'https://cdn.example.com' }), era, [], (text) => (log += text));
		try {
			const { tools } = (await client.listTools()) as { tools: Tool[] };
			expect(tools.map((t) => t.name)).toContain('follow_job');
			const receipt = await tool(client, 'generate_video', { prompt: `A paper boat on a pond (${era})`, resolution: '720P', duration: 4, waitSeconds: 0 });
			const jobId = String(receipt.structuredContent?.jobId);
			expect(receipt.structuredContent).toMatchObject({ status: expect.stringMatching(/queued|running/), nextStep: { tool: 'wait_for_job' } });
			let seen = receipt.structuredContent ?? {};
			let calls = 0;
			while (seen.status !== 'done' && calls < 10) {
				calls += 1;
				seen = (await tool(client, 'follow_job', { jobId })).structuredContent ?? {};
			}
			expect(seen).toMatchObject({ status: 'done', videoUrl: expect.stringContaining('/output.mp4'), expectedEndAt: expect.any(String) });
			expect(calls).toBeLessThanOrEqual(2);
			expect(log).toMatch(/served from http:\/\/127\.0\.0\.1:\d+, which the job view does not declare/);
		} finally {
			await client.close();
		}
	});

	it.each(['modern', 'legacy'] as const)('over HTTP, %s era: the view and its CSP (the video origins), hidden from clients without views; ChatGPT domain check answered', async (era) => {
		const server = await httpServer(serverEnv(sandbox, { OMNI_VIDEO_VIDEO_ORIGINS: sandbox.url, OMNI_VIDEO_MCP_OPENAI_CHALLENGE: 'challenge-token-123' }));
		try {
			const client = await overHttp(server.url, era);
			await offered(client, sandbox.url);
			await client.close();
			const plain = viewClient(era, false);
			await plain.connect(new StreamableHTTPClientTransport(new URL(server.url)));
			expect(((await plain.listTools()) as { tools: Tool[] }).tools.map((t) => t.name).sort()).toEqual(['generate_video', 'get_job', 'upload_image', 'wait_for_job']);
			await plain.close();
			const challenge = await fetch(new URL('/.well-known/openai-apps-challenge', server.url));
			expect(challenge.status).toBe(200);
			expect(await challenge.text()).toBe('challenge-token-123');
		} finally {
			await server.stop();
		}
	});

	(TEAM ? describe : describe.skip)('rendered in Chromium by the SDK AppBridge', () => {
		let browser: Browser;
		let hostPage: http.Server;
		let hostUrl: string;
		beforeAll(async () => {
			const { chromium } = await import('playwright-core');
			browser = await chromium.launch({
				executablePath: '/usr/bin/chromium',
				headless: true,
				args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--autoplay-policy=no-user-gesture-required'],
			});
			const hostScript = buildSync({ stdin: { contents: HOST_SOURCE, resolveDir: join(__dirname, '..'), loader: 'ts' }, bundle: true, write: false, format: 'iife', platform: 'browser', target: 'es2022', logLevel: 'silent' }).outputFiles[0].text;
			// The host page on loopback, as the sandbox's videos are: Chromium lets no public page load from loopback.
			hostPage = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><body style="margin:0"><script>${hostScript}</script></body>`));
			await new Promise<void>((resolve) => hostPage.listen(0, '127.0.0.1', () => resolve()));
			hostUrl = `http://127.0.0.1:${(hostPage.address() as AddressInfo).port}/`;
		});
		afterAll(async () => {
			hostPage?.close();
			await browser?.close();
		});

		/** A host page at its own origin; the view's tool calls go to the given clients in turn (replicas behind a proxy). */
		async function host(clients: Client[], options: { width?: number; theme?: 'light' | 'dark' } = {}): Promise<{ page: Page; viewCalls: () => number }> {
			LOGS.length = 0;
			const page = await browser.newPage({ viewport: { width: options.width ?? 640, height: 640 }, colorScheme: options.theme ?? 'light' });
			let viewCalls = 0;
			await page.exposeFunction('mcpCall', async (name: string, args: Record<string, unknown>) => {
				viewCalls += 1;
				return clients[viewCalls % clients.length].callTool({ name, arguments: args });
			});
			page.on('console', (message) => LOGS.push(`${message.type()}: ${message.text()}`));
			page.on('pageerror', (error) => LOGS.push(`pageerror: ${error.message}`));
			await page.goto(hostUrl);
			return { page, viewCalls: () => viewCalls };
		}

		/** Renders the view as a host does: the tool's input and result handed to it once it has initialized. */
		async function render(page: Page, client: Client, input: Record<string, unknown>, result: CallToolResult, theme: 'light' | 'dark' = 'light') {
			const read = await client.readResource({ uri: VIEW });
			const [content] = read.contents as unknown as { text: string; _meta: { ui: { csp: { resourceDomains: string[]; connectDomains: string[] } } } }[];
			await page.evaluate((view) => (window as unknown as { showView(v: unknown): Promise<void> }).showView(view), { html: content.text, csp: content._meta.ui.csp, theme, input, result });
			return page.frameLocator('iframe');
		}

		/** The view alone, as a host shows it: into docs/ with MCP_VIEW_SCREENSHOTS=1 (its committed screenshots), else a temporary folder. */
		const shots = process.env.MCP_VIEW_SCREENSHOTS === '1' ? join(__dirname, '..', '..', 'docs') : mkdtempSync(join(tmpdir(), 'omni-video-view-'));
		const shoot = (page: Page, name: string) => page.locator('iframe').screenshot({ path: join(shots, name) });

		/** When (real time) the sandbox's job ends, as its virtual clock has it. */
		async function untilEnded(jobId: string): Promise<number> {
			for (;;) {
				const job = sandbox.jobs.all.get(jobId);
				if (job && sandbox.clock.now() >= job.endsAt) return Date.now();
				await new Promise((resolve) => setTimeout(resolve, 50));
			}
		}

		/** Seconds until the view's video plays (its currentTime past 0.2 s), from now. */
		async function plays(page: Page, timeoutMs = 40_000): Promise<number> {
			const started = Date.now();
			const frame = page.frames().find((f) => f !== page.mainFrame());
			if (!frame) throw new Error('no view frame');
			try {
				await frame.waitForFunction(() => (document.querySelector('video')?.currentTime ?? 0) > 0.2, undefined, { timeout: timeoutMs, polling: 100 });
			} catch (error) {
				const state = await frame.evaluate(() => { const v = document.querySelector('video'); return { said: document.querySelector('#m')?.textContent, badge: document.querySelector('#s')?.textContent, src: v?.src, hidden: v?.hidden, error: v?.error?.message ?? v?.error?.code, ready: v?.readyState, network: v?.networkState, paused: v?.paused }; });
				throw new Error(`${(error as Error).message}\n${JSON.stringify(state)}\n${LOGS.join('\n')}`);
			}
			return (Date.now() - started) / 1000;
		}

		it('one server over HTTP: a job that ends while the call waits plays; a receipt turns into a playing video on its own, its looks counted; a failed job shows its reason; 360 px, dark; an undeclared origin is blocked', async () => {
			const server = await httpServer(serverEnv(sandbox, { OMNI_VIDEO_VIDEO_ORIGINS: sandbox.url }));
			const model = await overHttp(server.url, 'modern');
			try {
				// Ends while the call waits: the result itself plays.
				const input = { prompt: 'A lighthouse at dusk', resolution: '720P', duration: 4, waitSeconds: 40 };
				const done = await tool(model, 'generate_video', input);
				expect(done.structuredContent).toMatchObject({ status: 'done' });
				const first = await host([model]);
				const view = await render(first.page, model, input, done);
				await plays(first.page);
				await expect(view.locator('#d').textContent()).resolves.toMatch(/s · \d+×\d+ · \d+ credits/);
				await shoot(first.page, 'mcp-view-done.png');
				expect(first.viewCalls()).toBe(0);
				// Downloaded from the keyboard, through the host (a sandboxed frame may not download by itself).
				await view.locator('#dl').focus();
				await first.page.keyboard.press('Enter');
				await first.page.waitForFunction(() => (window as unknown as { downloads: unknown[] }).downloads.length > 0);
				expect(await first.page.evaluate(() => (window as unknown as { downloads: unknown[] }).downloads)).toEqual([
					{ contents: [expect.objectContaining({ type: 'resource_link', uri: done.structuredContent?.videoUrl, mimeType: 'video/mp4' })] },
				]);
				await first.page.close();

				// A receipt: the view follows the job through follow_job and plays it when it ends.
				const receiptInput = { prompt: 'A kite over a beach', resolution: '720P', duration: 4, waitSeconds: 0 };
				const receipt = await tool(model, 'generate_video', receiptInput);
				const jobId = String(receipt.structuredContent?.jobId);
				const second = await host([model], { width: 360, theme: 'dark' });
				const followed = await render(second.page, model, receiptInput, receipt, 'dark');
				await expect(followed.locator('#s').textContent()).resolves.toMatch(/queued|rendering/);
				// The view's first call answers at once with the expected end: progress on a host that sends no progress token.
				await followed.locator('#e', { hasText: /Expected in about \d+ s/ }).waitFor({ timeout: 5_000 });
				await shoot(second.page, 'mcp-view-rendering.png');
				const endedAtMs = untilEnded(jobId);
				await plays(second.page);
				report(`one server: job end to video playing in the view ${((Date.now() - (await endedAtMs)) / 1000).toFixed(1)} s`);
				// The view's looks are the schedule's: no more lookups than wait_for_job spends on a job like it.
				const viewLookups = lookups(sandbox, jobId);
				const waited = await tool(model, 'generate_video', { ...receiptInput, prompt: 'A kite over a lake' });
				const otherId = String(waited.structuredContent?.jobId);
				let answer = waited.structuredContent ?? {};
				while (answer.status !== 'done') answer = (await tool(model, 'wait_for_job', { jobId: otherId })).structuredContent ?? {};
				report(`one server: lookups of the job the view followed ${viewLookups} (view calls ${second.viewCalls()}), of one wait_for_job followed ${lookups(sandbox, otherId)}`);
				expect(viewLookups).toBeLessThanOrEqual(lookups(sandbox, otherId));
				expect(second.viewCalls()).toBeGreaterThanOrEqual(1);
				// 360 px wide and dark: nothing wider than the frame, the host's theme applied, at most 500 px tall.
				const frame = second.page.frames().find((f) => f !== second.page.mainFrame());
				const layout = await frame?.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: innerWidth, height: document.documentElement.scrollHeight, theme: document.documentElement.dataset.theme, bg: getComputedStyle(document.body).backgroundColor }));
				expect(layout).toMatchObject({ theme: 'dark', bg: 'rgb(30, 30, 30)' });
				expect(layout?.scroll).toBeLessThanOrEqual(layout?.width ?? 0);
				expect(layout?.height).toBeLessThanOrEqual(500);
				await shoot(second.page, 'mcp-view-360-dark.png');
				// Torn down, the view makes no more calls.
				await second.page.evaluate(() => (window as unknown as { teardown(): Promise<void> }).teardown());
				const callsAtTeardown = second.viewCalls();
				await new Promise((resolve) => setTimeout(resolve, 1_500));
				expect(second.viewCalls()).toBe(callsAtTeardown);
				// A request to an origin the view did not declare is blocked by the CSP.
				const blocked = await frame?.evaluate(
					() =>
						new Promise<string>((resolve) => {
							document.addEventListener('securitypolicyviolation', (event) => resolve(event.violatedDirective), { once: true });
							const img = new Image();
							img.src = 'https://undeclared.example/x.png';
							setTimeout(() => resolve('not blocked'), 3_000);
						}),
				);
				expect(blocked).toMatch(/img-src/);
				await second.page.close();

				// Failed: the service's reason and what to do.
				const failedInput = { prompt: 'A storm [sandbox:job-fails-content-policy]', resolution: '720P', duration: 4, waitSeconds: 40 };
				const failed = await tool(model, 'generate_video', failedInput);
				expect(failed.structuredContent).toMatchObject({ status: 'failed' });
				const third = await host([model]);
				const failedView = await render(third.page, model, failedInput, failed);
				await expect(failedView.locator('#m').textContent()).resolves.toMatch(/failed: .+content_policy.+No credits/);
				await shoot(third.page, 'mcp-view-failed.png');
				await third.page.close();

				// A video from an origin the view does not declare: a link that still works, not a blank player.
				const elsewhere = { ...done, structuredContent: { ...done.structuredContent, videoUrl: 'https://elsewhere.example/v.mp4' } };
				const fourth = await host([model]);
				const linked = await render(fourth.page, model, input, elsewhere);
				await expect(linked.locator('#op').getAttribute('href')).resolves.toBe('https://elsewhere.example/v.mp4');
				await expect(linked.locator('video').isHidden()).resolves.toBe(true);
				await fourth.page.close();
			} finally {
				await model.close();
				await server.stop();
			}
		});

		it('three replicas on Redis, both eras: the view follows a receipt across replicas to a playing video, with no more lookups than wait_for_job', async () => {
			let redis: RedisServer | undefined;
			const servers: HttpServer[] = [];
			const clients: ViewClient[] = [];
			try {
				redis = await startRedis();
				const { OMNI_VIDEO_MCP_STATE_DIR: _dir, ...env } = serverEnv(sandbox, { OMNI_VIDEO_VIDEO_ORIGINS: sandbox.url, OMNI_VIDEO_MCP_REDIS_URL: redis.url });
				for (let i = 0; i < 3; i += 1) servers.push(await httpServer(env));
				clients.push(await overHttp(servers[0].url, 'modern'), await overHttp(servers[1].url, 'legacy'), await overHttp(servers[2].url, 'modern'));
				const input = { prompt: 'A train crossing a bridge', resolution: '720P', duration: 4, waitSeconds: 0 };
				const receipt = await tool(clients[0], 'generate_video', input);
				const jobId = String(receipt.structuredContent?.jobId);
				const { page, viewCalls } = await host(clients);
				await render(page, clients[1], input, receipt);
				const frame = () => page.frames().find((f) => f !== page.mainFrame());
				const endedAtMs = untilEnded(jobId);
				await plays(page);
				report(`three replicas: job end to video playing in the view ${((Date.now() - (await endedAtMs)) / 1000).toFixed(1)} s`);
				expect(viewCalls()).toBeGreaterThanOrEqual(1);
				const viewLookups = lookups(sandbox, jobId);
				const other = await tool(clients[2], 'generate_video', { ...input, prompt: 'A train crossing a river' });
				const otherId = String(other.structuredContent?.jobId);
				let answer = other.structuredContent ?? {};
				for (let i = 0; answer.status !== 'done'; i += 1) answer = (await tool(clients[i % 3], 'wait_for_job', { jobId: otherId })).structuredContent ?? {};
				report(`three replicas: lookups of the job the view followed ${viewLookups} (view calls ${viewCalls()}), of one wait_for_job followed ${lookups(sandbox, otherId)}`);
				expect(viewLookups).toBeLessThanOrEqual(lookups(sandbox, otherId));
				expect(await frame()?.evaluate(() => document.querySelector('#s')?.textContent)).toBe('done');
				await page.close();
			} finally {
				for (const client of clients) await client.close().catch(() => undefined);
				for (const server of servers) await server.stop();
				await redis?.stop();
			}
		});
	});
});

/**
 * The test's host page: the SDK's AppBridge rendering the view in a sandboxed frame (an opaque
 * origin, as hosts give views), with the CSP its resource declares in a meta element, as the SDK's
 * sandbox proxy applies it; the view's tool calls go to the test's MCP clients.
 */
const HOST_SOURCE = `
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';
const w = window;
w.showView = async ({ html, csp, theme, input, result }) => {
	const media = (csp.resourceDomains || []).join(' ');
	const policy = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: " + media + "; media-src data: blob: " + media + "; font-src " + (media || "'none'") + "; connect-src " + ((csp.connectDomains || []).join(' ') || "'none'") + "; frame-src 'none'; base-uri 'none'";
	const frame = document.createElement('iframe');
	frame.setAttribute('sandbox', 'allow-scripts');
	frame.setAttribute('allow', 'autoplay');
	frame.style.cssText = 'width:100%;height:500px;border:0;display:block';
	frame.srcdoc = html.replace('<head>', '<head><meta http-equiv="Content-Security-Policy" content="' + policy + '">');
	document.body.append(frame);
	const bridge = new AppBridge(null, { name: 'test-host', version: '1.0.0' }, { openLinks: {}, downloadFile: {}, serverTools: {} }, { hostContext: { theme, displayMode: 'inline', platform: 'web', containerDimensions: { maxHeight: 500, width: innerWidth } } });
	bridge.oncalltool = (params) => w.mcpCall(params.name, params.arguments || {});
	bridge.onsizechange = ({ height }) => { if (height) frame.style.height = Math.min(height, 500) + 'px'; };
	bridge.onopenlink = async () => ({});
	w.downloads = [];
	bridge.ondownloadfile = async (params) => { w.downloads.push(params); return {}; };
	const initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
	await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
	await initialized;
	await bridge.sendToolInput({ arguments: input });
	await bridge.sendToolResult(result);
	w.teardown = () => bridge.teardownResource({});
};
`;
