import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Sandbox } from '../../sandbox';
import { ERA_OF } from './support/clients';
import { startProxy } from './support/team';
import { call, counts, mentionsRateLimit, httpServer, overHttp, RUN_ROWS, sandboxFor, serverEnv, type HttpServer } from './support/mcpHarness';

jest.setTimeout(120_000);
const run = promisify(execFile);

describe.each(RUN_ROWS)('the MCP server over Streamable HTTP, --service %s, the %s client', (reading, _client, { client: kind }) => {
	let sandbox: Sandbox;
	let server: HttpServer;
	const outputs: string[] = [];

	beforeAll(async () => {
		sandbox = await sandboxFor(reading);
		// No key in the server's environment: each connection brings its own, as a bearer header.
		const { OMNI_VIDEO_API_KEY: _key, ...env } = serverEnv(sandbox);
		server = await httpServer(env);
	});
	afterAll(async () => {
		await server?.stop();
		await sandbox?.close();
	});

	it('binds 127.0.0.1, lists its tools, and makes a video with the bearer key of the connection', async () => {
		expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
		const connected = await overHttp(server.url, sandbox.keys.pro, kind);
		try {
			const { tools } = await connected.client.listTools();
			expect(tools.map((tool) => tool.name).sort()).toEqual(['generate_video', 'get_job', 'upload_image', 'wait_for_job']);
			// Over HTTP the server cannot read the agent's files: upload_image takes a URL only.
			expect(Object.keys(tools.find((tool) => tool.name === 'upload_image')?.inputSchema.properties ?? {})).toEqual(['url']);
			const made = await call(connected.client, 'generate_video', { prompt: 'A red kite over a field', resolution: '720P', duration: 4, waitSeconds: 40 });
			outputs.push(JSON.stringify(made));
			expect(made.output).toMatchObject({ status: 'done', videoUrl: expect.stringContaining('/output.mp4') });
			expect(made.content).toContainEqual(expect.objectContaining({ type: 'resource_link', mimeType: 'video/mp4' }));
		} finally {
			await connected.close();
		}
	});

	it('a long job: a receipt inside the bound, progress on the way, cancellation honoured, finished through get_job', async () => {
		const connected = await overHttp(server.url, sandbox.keys.pro, kind);
		try {
			const progress: string[] = [];
			const started = Date.now();
			const receipt = await call(connected.client, 'generate_video', { prompt: 'Clouds over a ridge', resolution: '4K', duration: 10, waitSeconds: 2 }, { onprogress: (p) => progress.push(p.message ?? '') });
			outputs.push(JSON.stringify(receipt));
			expect(Date.now() - started).toBeLessThan(3_500);
			expect(receipt.output).toMatchObject({ status: expect.stringMatching(/^(queued|running)$/), nextStep: { tool: 'wait_for_job' } });
			expect(progress.length).toBeGreaterThanOrEqual(2);
			const jobId = receipt.output.jobId as string;

			// wait_for_job, cancelled by the client: the server stops looking.
			const controller = new AbortController();
			const waiting = call(connected.client, 'wait_for_job', { jobId, waitSeconds: 40 }, { signal: controller.signal });
			setTimeout(() => controller.abort(), 500);
			await expect(waiting).rejects.toThrow();
			const lookups = () => sandbox.journal.filter((entry) => entry.method === 'GET' && entry.path.endsWith(`/${jobId}`)).length;
			const atCancel = lookups();
			await new Promise((resolve) => setTimeout(resolve, 4_000));
			expect(lookups()).toBe(atCancel);

			let job = await call(connected.client, 'get_job', { jobId });
			for (let i = 0; i < 30 && job.output.status !== 'done'; i++) {
				await new Promise((resolve) => setTimeout(resolve, Math.min(3, Number((job.output.nextStep as { afterSeconds?: number })?.afterSeconds ?? 1)) * 1000));
				job = await call(connected.client, 'get_job', { jobId });
			}
			outputs.push(JSON.stringify(job));
			expect(job.output).toMatchObject({ status: 'done', jobId });
		} finally {
			await connected.close();
		}
	});

	// Once, on the default reading: the pacing is the same on both readings and eras, and CI's agents
	// step runs 16 agents on one Pro key on each (agents.test.ts), its team step 20 over replicas.
	(reading === 'default' ? it : it.skip)('20 calls at once on a Pro key: none surfaces a 429, none waits past its bound, one job each', async () => {
		const connected = await overHttp(server.url, sandbox.keys.pro, kind);
		const before = counts(sandbox);
		try {
			const boundSeconds = 25;
			const timed = await Promise.all(
				Array.from({ length: 20 }, async (_, i) => {
					const started = Date.now();
					const result = await call(connected.client, 'generate_video', { prompt: `Crowd scene number ${i}`, resolution: '720P', duration: 4, waitSeconds: boundSeconds });
					return { result, ms: Date.now() - started };
				}),
			);
			outputs.push(...timed.map(({ result }) => JSON.stringify(result)));
			const surfaced = timed.filter(({ result }) => result.isError || mentionsRateLimit(result));
			expect(surfaced).toEqual([]);
			expect(Math.max(...timed.map(({ ms }) => ms))).toBeLessThan((boundSeconds + 2) * 1000);
			// As an agent does: each answer's nextStep is followed (wait_for_job for a receipt, generate_video
			// again for a call still waiting for a place) until every video is done, and none makes a second job.
			let pending = timed.map(({ result }) => result).filter((result) => result.output.status !== 'done');
			for (let round = 0; round < 10 && pending.length > 0; round++) {
				const next = await Promise.all(
					pending.map((result) => {
						const step = result.output.nextStep as { tool: string; arguments: Record<string, unknown> };
						return call(connected.client, step.tool, step.arguments);
					}),
				);
				outputs.push(...next.map((result) => JSON.stringify(result)));
				expect(next.filter((result) => result.isError || mentionsRateLimit(result))).toEqual([]);
				pending = next.filter((result) => result.output.status !== 'done');
			}
			expect(pending).toEqual([]);
			expect(counts(sandbox).creates - before.creates).toBe(20);
			expect(counts(sandbox).jobs - before.jobs).toBe(20);
		} finally {
			await connected.close();
		}
	});

	it('refuses a page from another Origin, and a cancellation with another key; without a key says what to send', async () => {
		const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'page', version: '1' } } };
		const fromPage = await fetch(server.url, {
			method: 'POST',
			headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', origin: 'https://evil.example' },
			body: JSON.stringify(initialize),
		});
		expect(fromPage.status).toBe(403);
		expect(await fromPage.text()).toContain('--allow-origin');

		if (ERA_OF[kind] === 'legacy') {
			// A 2025 client's session id is no secret of the key: another key's cancellation naming it stops
			// nothing; the key's own does.
			const opened = await overHttp(server.url, sandbox.keys.pro, kind);
			const sessionId = opened.client.sessionId();
			expect(sessionId).toEqual(expect.any(String));
			const cancelAll = (key: string) =>
				Promise.all(
					[0, 1, 2, 3, 4].map((requestId) =>
						fetch(server.url, {
							method: 'POST',
							headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId ?? '', 'mcp-protocol-version': '2025-11-25', authorization: `Bearer ${key}` },
							body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'test' } }),
						}),
					),
				);
			const args = { prompt: 'A slow tide', resolution: '4K', duration: 10 };
			const notStopped = call(opened.client, 'generate_video', { ...args, waitSeconds: 3 });
			await new Promise((resolve) => setTimeout(resolve, 1_000));
			await cancelAll(sandbox.keys.premium);
			expect((await notStopped).output).toMatchObject({ status: expect.stringMatching(/^(queued|running)$/) });
			const stopped = call(opened.client, 'wait_for_job', { jobId: (await notStopped).output.jobId, waitSeconds: 20 });
			const startedMs = Date.now();
			await new Promise((resolve) => setTimeout(resolve, 1_000));
			await cancelAll(sandbox.keys.pro);
			const answer = await stopped;
			expect(answer.isError).toBe(true);
			expect(answer.text).toMatch(/cancelled/);
			expect(Date.now() - startedMs).toBeLessThan(5_000);
			await opened.close();
		}

		const before = counts(sandbox).requests;
		const keyless = await overHttp(server.url, undefined, kind);
		const refused = await call(keyless.client, 'get_job', { jobId: 'job_x' });
		await keyless.close();
		expect(refused.isError).toBe(true);
		expect(refused.text).toContain('Authorization: Bearer');
		expect(counts(sandbox).requests).toBe(before);
	});

	it('never shows the key, in results or in its log', () => {
		// Every call's answer this block made: 20 at once and their follow-ups on the default reading.
		expect(outputs.length).toBeGreaterThan(reading === 'default' ? 20 : 2);
		const everything = outputs.join('\n') + server.log();
		expect(everything).not.toContain(sandbox.keys.pro);
	});
});

/**
 * A balancer's pool, in a process of its own: a connection used once, left idle 6 s, then used
 * again. Its own process, as a balancer is, with a `node:http` no test file has touched; each step
 * says what it did on stderr, so a failure names the step it stopped at.
 */
const POOL = `
const http = require('node:http');
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const get = (url) => new Promise((resolve, reject) => {
	const request = http.get(url, { agent }, (answer) => {
		answer.resume();
		answer.on('end', () => resolve({ status: answer.statusCode, reused: request.reusedSocket }));
	});
	request.on('error', reject);
});
(async () => {
	const seen = [];
	for (const url of process.argv.slice(1)) {
		seen.push(await get(url));
		console.error('answered ' + url);
		await new Promise((resolve) => setTimeout(resolve, 6000));
		seen.push(await get(url));
		console.error('answered again after 6 s idle ' + url);
	}
	agent.destroy();
	console.log(JSON.stringify(seen));
})().catch((error) => {
	console.error(error.message);
	process.exit(1);
});
`;

describe('a connection left idle', () => {
	it('for 6 s, as a balancer pools them, is still open: on the server, and on the test\'s balancer', async () => {
		const sandbox = await sandboxFor('default');
		const server = await httpServer(serverEnv(sandbox));
		const proxy = await startProxy(() => [server.url]);
		try {
			const urls = [server.url, proxy.url].map((url) => url.replace(/\/mcp$/, '/healthz'));
			const { stdout } = await run(process.execPath, ['-e', POOL, ...urls], { timeout: 60_000 });
			expect(JSON.parse(stdout)).toEqual([
				{ status: 200, reused: false },
				{ status: 200, reused: true },
				{ status: 200, reused: false },
				{ status: 200, reused: true },
			]);
		} finally {
			await proxy.close();
			await server.stop();
			await sandbox.close();
		}
	});
});
