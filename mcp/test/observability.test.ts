import { existsSync, renameSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Sandbox } from '../../sandbox';
import { call, httpServer, overHttp, overStdio, sandboxFor, serverEnv, type HttpServer } from './support/mcpHarness';
import { REDIS_SERVER, startRedis } from './support/team';

jest.setTimeout(60_000);

/** Words that must reach the service and no operator's view: a tool's argument. */
const PROMPT = 'A heron lifting off a misty canal at dawn';
const MISSING_JOB = 'job_observability_missing';
/** A client's W3C trace context (its trace id, the span it called from). */
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_SPAN_ID = '00f067aa0ba902b7';

/**
 * A replica as an operator watches it (docs/mcp.md#running-it-for-a-team): its probes, its
 * Prometheus metrics and its OpenTelemetry traces, none of which needs the key or shows it, a job
 * id, a prompt or a record.
 */
describe('a server an operator can watch', () => {
	let sandbox: Sandbox;

	beforeAll(async () => {
		sandbox = await sandboxFor('default');
	});
	afterAll(async () => {
		await sandbox?.close();
	});

	/** The server's environment over HTTP: no key of its own, each connection brings its bearer. */
	const keylessEnv = (extra: Record<string, string> = {}) => {
		const { OMNI_VIDEO_API_KEY: _key, ...env } = serverEnv(sandbox, extra);
		return env;
	};

	describe('over HTTP, on a records folder', () => {
		let server: HttpServer;
		let stateDir: string;
		let base: string;

		beforeAll(async () => {
			const env = keylessEnv();
			stateDir = env.OMNI_VIDEO_MCP_STATE_DIR;
			server = await httpServer(env);
			base = server.url.replace(/\/mcp$/, '');
		});
		afterAll(async () => {
			await server?.stop();
		});

		it('/healthz and /readyz answer without a key; /readyz is 503 with its reason while the records folder is gone', async () => {
			expect(await get(`${base}/healthz`)).toEqual({ status: 200, body: { status: 'ok' } });
			expect(await get(`${base}/readyz`)).toEqual({ status: 200, body: { status: 'ready' } });

			renameSync(stateDir, `${stateDir}.away`);
			try {
				const unready = await get(`${base}/readyz`);
				expect(unready).toEqual({ status: 503, body: { status: 'unready', reason: expect.stringMatching(/records/) } });
				// Its own words: not the folder's path, which only the operator's log names.
				expect(JSON.stringify(unready.body)).not.toContain(stateDir);
			} finally {
				renameSync(`${stateDir}.away`, stateDir);
			}
			expect((await get(`${base}/readyz`)).status).toBe(200);
			// The log says each change once.
			expect(server.log()).toMatch(/not ready: The records cannot be reached/);
			expect(server.log()).toMatch(/ready: the records answer again/);
			expect((await fetch(`${base}/readyz`, { method: 'POST' })).status).toBe(405);
		});

		it('its metrics move with the calls made, and name no job, key or prompt', async () => {
			const before = parseMetrics(await scrape(base));
			const connected = await overHttp(server.url, sandbox.keys.pro);
			let jobId: string;
			try {
				const missing = await call(connected.client, 'get_job', { jobId: MISSING_JOB });
				expect(missing.isError).toBe(true);
				const made = await call(connected.client, 'generate_video', { prompt: PROMPT, resolution: '720P', duration: 4, waitSeconds: 1 });
				expect(made.isError).toBeFalsy();
				jobId = made.output.jobId as string;
				expect(jobId).toEqual(expect.any(String));
			} finally {
				await connected.close();
			}
			const text = await scrape(base);
			const after = parseMetrics(text);
			const moved = (name: string, labels: Record<string, string> = {}) => sum(after, name, labels) - sum(before, name, labels);

			expect(moved('omni_video_mcp_tool_calls_total', { tool: 'get_job', outcome: 'tool_error' })).toBe(1);
			expect(moved('omni_video_mcp_tool_calls_total', { tool: 'generate_video', outcome: 'ok' })).toBe(1);
			expect(moved('omni_video_mcp_tool_call_duration_seconds_count', { tool: 'generate_video' })).toBe(1);
			expect(moved('mcp_server_operation_duration_seconds_count', { mcp_method_name: 'tools/call', gen_ai_tool_name: 'get_job', error_type: 'tool_error' })).toBe(1);
			expect(moved('mcp_server_operation_duration_seconds_count', { mcp_method_name: 'tools/call', gen_ai_tool_name: 'generate_video' })).toBe(1);
			// The lookup answered 404; the create and its looks 2xx.
			expect(moved('omni_video_mcp_api_requests_total', { outcome: '4xx' })).toBeGreaterThanOrEqual(1);
			expect(moved('omni_video_mcp_api_requests_total', { outcome: '2xx' })).toBeGreaterThanOrEqual(1);
			expect(moved('omni_video_mcp_store_step_duration_seconds_count', { operation: 'claim create' })).toBeGreaterThanOrEqual(1);
			// The job made is still rendering (3-9 s at this speed), holding its place on the key's plan.
			expect(sum(after, 'omni_video_mcp_plan_places_in_use')).toBeGreaterThanOrEqual(1);
			expect(text).toContain('omni_video_mcp_api_rate_limited_total');
			expect(text).toContain('process_cpu_user_seconds_total');
			expect(text).toContain('nodejs_eventloop_lag_seconds');

			for (const secret of [sandbox.keys.pro, jobId, MISSING_JOB, PROMPT]) expect(text).not.toContain(secret);
			expect(server.log()).not.toContain(sandbox.keys.pro);
		});

		it('keeps nothing for a bearer key the service refused: a server open to anyone holds the keys that work', async () => {
			const held = async () => sum(parseMetrics(await scrape(base)), 'omni_video_mcp_keys_held');
			const good = await overHttp(server.url, sandbox.keys.pro);
			try {
				expect((await call(good.client, 'get_job', { jobId: MISSING_JOB })).isError).toBe(true);
			} finally {
				await good.close();
			}
			const before = await held();
			expect(before).toBeGreaterThanOrEqual(1);
			for (let i = 0; i < 5; i++) {
				const wrong = await overHttp(server.url, `ov_wrong_key_${i}_${Date.now()}`);
				try {
					const refused = await call(wrong.client, 'get_job', { jobId: MISSING_JOB });
					expect(refused.isError).toBe(true);
					expect(refused.text).toMatch(/API key was refused/);
				} finally {
					await wrong.close();
				}
			}
			expect(await held()).toBe(before);
		});
	});

	describe('traces, to an OTLP collector on loopback', () => {
		let collector: Collector;

		beforeAll(async () => {
			collector = await startCollector();
		});
		afterAll(async () => {
			await collector?.close();
		});

		it('over HTTP: one span per tool call, as the MCP conventions name it, sent at the latest when the server stops', async () => {
			const server = await httpServer(keylessEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }));
			let jobId: string;
			try {
				expect(server.log()).toContain(`traces to ${collector.url}/v1/traces`);
				const connected = await overHttp(server.url, sandbox.keys.pro);
				try {
					const made = await call(connected.client, 'generate_video', { prompt: PROMPT, resolution: '720P', duration: 4, waitSeconds: 1 });
					expect(made.isError).toBeFalsy();
					jobId = made.output.jobId as string;
					expect((await call(connected.client, 'get_job', { jobId: MISSING_JOB })).isError).toBe(true);
					// The agent's own trace, as the MCP conventions carry it: the call's span is its child.
					const traced = { name: 'get_job', arguments: { jobId: MISSING_JOB }, _meta: { traceparent: `00-${TRACE_ID}-${PARENT_SPAN_ID}-01` } };
					expect((await connected.client.callTool(traced)).isError).toBe(true);
				} finally {
					await connected.close();
				}
			} finally {
				// SIGTERM: the spans still batched are sent before the process ends.
				await server.stop();
			}
			const spans = collector.spans();
			const made = spans.find((span) => span.name === 'tools/call generate_video');
			expect(made).toMatchObject({
				kind: 2, // SERVER
				attributes: {
					'mcp.method.name': 'tools/call',
					'gen_ai.tool.name': 'generate_video',
					'gen_ai.operation.name': 'execute_tool',
					'mcp.protocol.version': '2026-07-28',
					'network.transport': 'tcp',
				},
				resource: { 'service.name': 'omni-video-mcp' },
			});
			expect(made?.attributes['error.type']).toBeUndefined();
			expect(made?.status.code ?? 0).not.toBe(2);
			const refused = spans.find((span) => span.name === 'tools/call get_job' && span.traceId !== TRACE_ID);
			expect(refused).toMatchObject({ kind: 2, attributes: { 'gen_ai.tool.name': 'get_job', 'error.type': 'tool_error' }, status: { code: 2 } }); // ERROR

			expect(spans.find((span) => span.traceId === TRACE_ID)).toMatchObject({ name: 'tools/call get_job', parentSpanId: PARENT_SPAN_ID });

			const everything = collector.bodies().join('\n');
			for (const secret of [sandbox.keys.pro, jobId, MISSING_JOB, PROMPT]) expect(everything).not.toContain(secret);
		});

		it('over stdio: the spans are sent when the client closes the server', async () => {
			const sent = collector.spans().length;
			const connected = await overStdio(serverEnv(sandbox, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.url}/v1/traces` }));
			try {
				expect((await call(connected.client, 'get_job', { jobId: MISSING_JOB })).isError).toBe(true);
			} finally {
				await connected.close();
			}
			const spans = await until(() => collector.spans().slice(sent).filter((span) => span.name === 'tools/call get_job'), 5_000);
			expect(spans[0]).toMatchObject({ attributes: { 'network.transport': 'pipe', 'error.type': 'tool_error' } });
			expect(connected.log()).not.toContain(sandbox.keys.pro);
		});
	});

	/**
	 * The team layout's readiness: a replica whose Redis is stopped is taken out of the load
	 * balancer's rotation, and put back once Redis is. Needs Debian's redis-server, as team.test.ts
	 * (MCP_TEAM_TEST=1, in the team step of .ci/run).
	 */
	(process.env.MCP_TEAM_TEST === '1' ? it : it.skip)('on Redis: /readyz is 503 while Redis is stopped, 200 once it is back', async () => {
		if (!existsSync(REDIS_SERVER)) throw new Error(`${REDIS_SERVER} is missing: apt-get install redis-server (.ci/run does)`);
		const redis = await startRedis();
		const { OMNI_VIDEO_MCP_STATE_DIR: _dir, ...env } = keylessEnv({ OMNI_VIDEO_MCP_REDIS_URL: redis.url });
		let server: HttpServer | undefined;
		try {
			server = await httpServer(env);
			const base = server.url.replace(/\/mcp$/, '');
			expect((await get(`${base}/readyz`)).status).toBe(200);
			await redis.stop();
			const unready = await get(`${base}/readyz`);
			expect(unready).toEqual({ status: 503, body: { status: 'unready', reason: expect.stringMatching(/records/) } });
			expect(JSON.stringify(unready.body)).not.toContain(redis.url);
			expect((await get(`${base}/healthz`)).status).toBe(200);
			await redis.restart();
			await until(async () => (await get(`${base}/readyz`)).status === 200, 5_000);
		} finally {
			await server?.stop();
			await redis.stop();
		}
	});
});

async function get(url: string): Promise<{ status: number; body: unknown }> {
	const response = await fetch(url);
	return { status: response.status, body: await response.json() };
}

async function scrape(base: string): Promise<string> {
	const response = await fetch(`${base}/metrics`);
	expect(response.status).toBe(200);
	expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
	return response.text();
}

interface Sample {
	name: string;
	labels: Record<string, string>;
	value: number;
}

/** Prometheus's text format, as far as these metrics use it (no escaped quotes in label values). */
function parseMetrics(text: string): Sample[] {
	const samples: Sample[] = [];
	for (const line of text.split('\n')) {
		const found = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
		if (!found) continue;
		const labels = Object.fromEntries([...(found[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((pair) => [pair[1], pair[2]]));
		samples.push({ name: found[1], labels, value: Number(found[3]) });
	}
	return samples;
}

/** The samples of that name whose labels are exactly those given. */
function sum(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
	const wanted = JSON.stringify(Object.entries(labels).sort());
	return samples.filter((sample) => sample.name === name && JSON.stringify(Object.entries(sample.labels).sort()) === wanted).reduce((total, sample) => total + sample.value, 0);
}

async function until<T>(ask: () => T | Promise<T>, withinMs: number): Promise<T> {
	const deadline = Date.now() + withinMs;
	for (;;) {
		const answer = await ask();
		if ((Array.isArray(answer) ? answer.length > 0 : Boolean(answer)) || Date.now() > deadline) return answer;
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
}

interface ExportedSpan {
	name: string;
	traceId: string;
	parentSpanId?: string;
	kind: number;
	attributes: Record<string, unknown>;
	status: { code?: number };
	resource: Record<string, unknown>;
}

interface Collector {
	url: string;
	bodies(): string[];
	spans(): ExportedSpan[];
	close(): Promise<void>;
}

type OtlpAttribute = { key: string; value: Record<string, unknown> };

/** An OpenTelemetry collector's OTLP/HTTP traces endpoint, as far as a test needs it: each JSON body kept. */
async function startCollector(): Promise<Collector> {
	const bodies: string[] = [];
	const server = http.createServer(async (req, res) => {
		const chunks: Buffer[] = [];
		for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
		if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
		expect(req.headers['content-type']).toBe('application/json');
		bodies.push(Buffer.concat(chunks).toString('utf8'));
		res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
	const { port } = server.address() as AddressInfo;
	const flat = (attributes: OtlpAttribute[] = []) => Object.fromEntries(attributes.map(({ key, value }) => [key, Object.values(value)[0]]));
	return {
		url: `http://127.0.0.1:${port}`,
		bodies: () => [...bodies],
		spans: () =>
			bodies.flatMap((body) => {
				const { resourceSpans = [] } = JSON.parse(body) as { resourceSpans?: { resource?: { attributes?: OtlpAttribute[] }; scopeSpans?: { spans?: (Omit<ExportedSpan, 'attributes' | 'resource'> & { attributes?: OtlpAttribute[] })[] }[] }[] };
				return resourceSpans.flatMap(({ resource, scopeSpans = [] }) =>
					scopeSpans.flatMap(({ spans = [] }) => spans.map((span) => ({ ...span, attributes: flat(span.attributes), status: span.status ?? {}, resource: flat(resource?.attributes) }))),
				);
			}),
		close: () =>
			new Promise<void>((resolve) => {
				server.closeAllConnections();
				server.close(() => resolve());
			}),
	};
}
