/* eslint-disable no-console -- a CI check that reports what the Inspector printed */
/**
 * The MCP Inspector's CLI (`@modelcontextprotocol/inspector --cli`, a real client, under Node 22)
 * against the built server and the sandbox, on both readings of the service, over stdio and over
 * Streamable HTTP, in both protocol eras. mcp/ci.sh installs the Inspector and Node 22 and passes
 * INSPECTOR (its launcher). Each check throws with what the Inspector printed; the figures go to
 * stdout for the CI log.
 *
 * The era is the Inspector's `--protocol-era`: `legacy` (its default for a command or URL given on
 * the command line: initialize, 2025-11-25), `auto` (server/discover, falling back to initialize)
 * or `modern` (2026-07-28 pinned, no fallback). Modern is pinned here so that a server that lost
 * the era fails rather than passes in 2025; negotiation is the v2 SDK's auto mode in eras.test.ts.
 * As in the SDK suites (mcpHarness RUNS), the reading and the era are paired rather than
 * multiplied, which keeps this step under a minute and a half: the full checks run on the default
 * reading in the modern era and on the spec reading in the 2025 era (with no flag, so the
 * Inspector's default is what is tested), and each reading adds a quick tools/list and get_job in
 * the other era, over each transport.
 *
 * The Inspector prints no era with a tool's result, only for `--method initialize` (the
 * protocolVersion it negotiated), asked once per transport on each reading for its full checks'
 * era. So the era of every invocation is asserted on the wire: over stdio the Inspector runs the
 * server through a small wrapper that copies its stdin (the lines the Inspector sent) to a file;
 * over HTTP it talks to a proxy in front of the server that notes each POST's headers and JSON-RPC
 * methods. Modern: server/discover first, no initialize, and every request carries 2026-07-28 (in
 * its _meta, and over HTTP as MCP-Protocol-Version with Mcp-Method naming its method). 2025: an
 * initialize first, and 2026-07-28 nowhere.
 */
import { execFile } from 'node:child_process';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { counts, CLI, EXPECTED_RENDER_SECONDS, httpServer, READINGS, sandboxFor, serverEnv, type Reading } from '../support/mcpHarness';

const INSPECTOR = process.env.INSPECTOR ?? '';
/** The Inspector exits 5 when a tool answers isError. */
const TOOL_ERROR_EXIT = 5;
const MODERN_VERSION = '2026-07-28';
const TOOL_NAMES = ['generate_video', 'get_job', 'upload_image', 'wait_for_job'];

type Era = 'modern' | 'legacy';
/** The 2025 era is the Inspector's default: no flag, so that default is asserted too. */
const ERA_FLAGS: Record<Era, string[]> = { modern: ['--protocol-era', 'modern'], legacy: [] };
/** The era of the full checks on each reading; the other era gets the quick ones. */
const FULL_ERA: Record<Reading, Era> = { default: 'modern', spec: 'legacy' };
const OTHER: Record<Era, Era> = { modern: 'legacy', legacy: 'modern' };

interface Printed {
	code: number;
	stdout: string;
	stderr: string;
	ms: number;
	json?: {
		structuredContent?: Record<string, unknown>;
		isError?: boolean;
		tools?: Array<{ name: string; inputSchema: unknown; outputSchema?: unknown }>;
		protocolVersion?: string;
	};
}

/** One JSON-RPC request or notification the Inspector sent, as the server received it. */
interface Sent {
	method: string;
	/** initialize's params.protocolVersion (the 2025 offer). */
	offered?: string;
	/** params._meta's protocol version (the 2026-07-28 per-request version). */
	metaVersion?: string;
	/** Over HTTP, the request's MCP-Protocol-Version and Mcp-Method headers. */
	headers?: { version?: string; method?: string };
}

function inspector(args: string[]): Promise<Printed> {
	const started = Date.now();
	return new Promise((resolve) => {
		execFile('node', [INSPECTOR, '--cli', ...args], { timeout: 90_000, maxBuffer: 10 * 1024 * 1024 }, (error, stdout, stderr) => {
			const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
			let json: Printed['json'];
			try {
				json = JSON.parse(stdout);
			} catch {
				json = undefined;
			}
			resolve({ code, stdout, stderr, ms: Date.now() - started, json });
		});
	});
}

function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
	return typeof value === 'string' ? value : undefined;
}

/** The requests and notifications in one JSON-RPC payload (a message or a batch); responses have no method. */
function sentIn(payload: string, headers?: Sent['headers']): Sent[] {
	let parsed: unknown;
	try {
		parsed = JSON.parse(payload);
	} catch {
		return [];
	}
	const sent: Sent[] = [];
	for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
		if (!isRecord(message) || typeof message.method !== 'string') continue;
		const params = isRecord(message.params) ? message.params : {};
		const meta = isRecord(params._meta) ? params._meta : {};
		sent.push({ method: message.method, offered: text(params.protocolVersion), metaVersion: text(meta['io.modelcontextprotocol/protocolVersion']), headers });
	}
	return sent;
}

/** Asserts the messages of one Inspector invocation are of that era; returns the evidence, in words. */
function assertEra(era: Era, sent: Sent[], label: string): string {
	const methods = sent.map((message) => message.method);
	const seen = `${label} sent ${JSON.stringify(sent)}`;
	assert.ok(sent.length > 0, `${label}: nothing sent`);
	if (era === 'modern') {
		assert.equal(methods[0], 'server/discover', seen);
		assert.ok(!methods.includes('initialize'), seen);
		for (const message of sent) {
			assert.equal(message.metaVersion, MODERN_VERSION, seen);
			if (message.headers) assert.deepEqual(message.headers, { version: MODERN_VERSION, method: message.method }, seen);
		}
		const where = sent[0].headers ? `_meta and header MCP-Protocol-Version ${MODERN_VERSION}, header Mcp-Method its method` : `_meta protocolVersion ${MODERN_VERSION}`;
		return `${methods.join(', ')}; each with ${where}; no initialize`;
	}
	assert.equal(methods[0], 'initialize', seen);
	assert.match(sent[0].offered ?? '', /^20\d\d-\d\d-\d\d$/, seen);
	assert.notEqual(sent[0].offered, MODERN_VERSION, seen);
	assert.ok(!methods.includes('server/discover'), seen);
	for (const message of sent) {
		assert.notEqual(message.metaVersion, MODERN_VERSION, seen);
		assert.notEqual(message.headers?.version, MODERN_VERSION, seen);
	}
	const versions = [...new Set(sent.flatMap((message) => (message.headers?.version ? [message.headers.version] : [])))];
	const headers = sent[0].headers ? `, header MCP-Protocol-Version ${versions.join('/') || 'none'}` : '';
	return `${methods.join(', ')}; initialize offered ${sent[0].offered}${headers}; ${MODERN_VERSION} nowhere`;
}

/**
 * Run by the Inspector as the stdio server: the server itself, its stdin copied to the file named
 * first. Signals are passed on so that the server never outlives the Inspector.
 */
const STDIN_COPIER = `'use strict';
const { spawn } = require('node:child_process');
const { appendFileSync, writeFileSync } = require('node:fs');
const [copy, ...args] = process.argv.slice(2);
writeFileSync(copy, '');
const server = spawn(process.execPath, args, { stdio: ['pipe', 'inherit', 'inherit'] });
server.stdin.on('error', () => {});
process.stdin.on('data', (chunk) => {
	appendFileSync(copy, chunk);
	server.stdin.write(chunk);
});
process.stdin.on('end', () => server.stdin.end());
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => server.kill(signal));
server.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
`;

function headerText(headers: IncomingHttpHeaders, name: string): string | undefined {
	const value = headers[name];
	return Array.isArray(value) ? value.join(', ') : value;
}

/** A proxy on a free loopback port in front of the server's /mcp, noting what each POST carried. */
async function recordingProxy(target: string): Promise<{ url: string; sent: Sent[]; close(): void }> {
	const upstream = new URL(target);
	const sent: Sent[] = [];
	const proxy = createServer((incoming, outgoing) => {
		const chunks: Buffer[] = [];
		incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
		incoming.on('end', () => {
			const body = Buffer.concat(chunks);
			if (incoming.method === 'POST') {
				sent.push(...sentIn(body.toString('utf8'), { version: headerText(incoming.headers, 'mcp-protocol-version'), method: headerText(incoming.headers, 'mcp-method') }));
			}
			const forward = request(
				{ hostname: upstream.hostname, port: upstream.port, path: incoming.url, method: incoming.method, headers: { ...incoming.headers, host: upstream.host } },
				(answer) => {
					outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
					answer.pipe(outgoing);
				},
			);
			forward.on('error', () => {
				if (!outgoing.headersSent) outgoing.writeHead(502);
				outgoing.end();
			});
			outgoing.on('close', () => forward.destroy());
			forward.end(body);
		});
	});
	await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
	const { port } = proxy.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}${upstream.pathname}`,
		sent,
		close: () => {
			proxy.closeAllConnections();
			proxy.close();
		},
	};
}

async function onReading(reading: Reading, scratch: string): Promise<void> {
	const sandbox = await sandboxFor(reading);
	const env = serverEnv(sandbox);
	const full = FULL_ERA[reading];
	const other = OTHER[full];
	const printed: string[] = [];
	/** The wire evidence of the last invocation per transport and era; the Inspector's own report per transport. */
	const evidence = new Map<string, string>();
	const reported = new Map<string, string>();
	const keep = (result: Printed) => {
		printed.push(result.stdout, result.stderr);
		return result;
	};
	let copies = 0;
	const stdio = async (era: Era, method: string, extra: string[] = []) => {
		const copy = join(scratch, `${reading}-${++copies}.jsonl`);
		const result = keep(
			await inspector([
				...Object.entries(env).flatMap(([name, value]) => ['-e', `${name}=${value}`]),
				...ERA_FLAGS[era],
				'node',
				join(scratch, 'stdin-copier.cjs'),
				copy,
				CLI,
				'--method',
				method,
				...extra,
			]),
		);
		const lines = readFileSync(copy, 'utf8').split('\n');
		evidence.set(`stdio ${era}`, assertEra(era, lines.flatMap((line) => sentIn(line)), `stdio ${era} ${method}`));
		return result;
	};
	/** The Inspector's own word on the full checks' era: the protocolVersion it prints for --method initialize. */
	const report = async (transport: string, run: (era: Era, method: string) => Promise<Printed>) => {
		const shown = await run(full, 'initialize');
		assert.equal(shown.code, 0, shown.stdout + shown.stderr);
		const version = shown.json?.protocolVersion ?? '';
		if (full === 'modern') assert.equal(version, MODERN_VERSION, shown.stdout);
		else assert.match(version, /^2025-\d\d-\d\d$/, shown.stdout);
		reported.set(transport, version);
	};
	const assertTools = (listed: Printed) => {
		assert.equal(listed.code, 0, listed.stderr);
		assert.deepEqual((listed.json?.tools ?? []).map((tool) => tool.name).sort(), TOOL_NAMES);
	};
	try {
		await report('stdio', stdio);
		const listed = await stdio(full, 'tools/list');
		assertTools(listed);
		for (const tool of listed.json?.tools ?? []) assert.ok(tool.inputSchema && tool.outputSchema, `${tool.name} has both schemas`);

		// A long job (4K, 10 s) with a 2 s bound: a receipt, not an error, then wait_for_job ends it.
		const long = await stdio(full, 'tools/call', ['--tool-name', 'generate_video', '--tool-arg', 'prompt=A slow pan over a harbour', 'resolution=4K', 'duration=10', 'waitSeconds=2']);
		assert.equal(long.code, 0, long.stdout + long.stderr);
		const receipt = long.json?.structuredContent ?? {};
		assert.match(String(receipt.status), /^(queued|running)$/);
		assert.equal((receipt.nextStep as { tool?: string })?.tool, 'wait_for_job');
		const jobId = String(receipt.jobId);
		const finished = await stdio(full, 'tools/call', ['--tool-name', 'wait_for_job', '--tool-arg', `jobId=${jobId}`, 'waitSeconds=40']);
		assert.equal(finished.code, 0, finished.stdout + finished.stderr);
		assert.equal(finished.json?.structuredContent?.status, 'done');
		assert.match(finished.stdout, /"mimeType": "video\/mp4"/);

		// Bad input: the Inspector's tool-error exit, the field named, nothing sent.
		const before = counts(sandbox).requests;
		const bad = await stdio(full, 'tools/call', ['--tool-name', 'generate_video', '--tool-arg', 'prompt=A fox', 'duration=12']);
		assert.equal(bad.code, TOOL_ERROR_EXIT, bad.stdout + bad.stderr);
		assert.match(bad.stdout, /duration: Duration must be/);
		assert.equal(counts(sandbox).requests, before);

		// The other era, quickly: the tools, and the job just made.
		assertTools(await stdio(other, 'tools/list'));
		const looked = await stdio(other, 'tools/call', ['--tool-name', 'get_job', '--tool-arg', `jobId=${jobId}`]);
		assert.equal(looked.code, 0, looked.stdout + looked.stderr);
		assert.equal(looked.json?.structuredContent?.status, 'done');

		// Over HTTP, the key as the bearer header: the same call twice (an agent retrying) is one job.
		const { OMNI_VIDEO_API_KEY: _key, ...keyless } = env;
		let madeByRepeat = 0;
		const server = await httpServer(keyless);
		const proxy = await recordingProxy(server.url);
		try {
			const http = async (era: Era, method: string, extra: string[] = []) => {
				const from = proxy.sent.length;
				const result = keep(
					await inspector([proxy.url, '--transport', 'http', ...ERA_FLAGS[era], '--header', `Authorization: Bearer ${sandbox.keys.pro}`, '--method', method, ...extra]),
				);
				evidence.set(`HTTP ${era}`, assertEra(era, proxy.sent.slice(from), `HTTP ${era} ${method}`));
				return result;
			};
			await report('HTTP', http);
			const args = ['--tool-name', 'generate_video', '--tool-arg', 'prompt=A red kite', 'resolution=720P', 'duration=4', 'waitSeconds=30'];
			const creates = counts(sandbox).creates;
			const first = await http(full, 'tools/call', args);
			const again = await http(full, 'tools/call', args);
			assert.equal(first.code, 0, first.stdout + first.stderr);
			assert.equal(first.json?.structuredContent?.status, 'done');
			assert.equal(again.json?.structuredContent?.jobId, first.json?.structuredContent?.jobId);
			assert.equal(again.json?.structuredContent?.retried, true);
			madeByRepeat = counts(sandbox).creates - creates;
			assert.equal(madeByRepeat, 1);

			assertTools(await http(other, 'tools/list'));
			const looked = await http(other, 'tools/call', ['--tool-name', 'get_job', '--tool-arg', `jobId=${String(first.json?.structuredContent?.jobId)}`]);
			assert.equal(looked.code, 0, looked.stdout + looked.stderr);
			assert.equal(looked.json?.structuredContent?.status, 'done');
			printed.push(server.log());
		} finally {
			proxy.close();
			await server.stop();
		}

		assert.ok(!printed.join('\n').includes(sandbox.keys.pro), 'the key appears in no output');
		const shown = { status: receipt.status, jobId: receipt.jobId, nextStep: receipt.nextStep, message: receipt.message };
		console.log(`--service ${reading}: full checks in the ${full} era, tools/list and get_job in the ${other} era`);
		console.log(`--service ${reading}: the Inspector CLI printed for a long job after ${(long.ms / 1000).toFixed(1)} s (bound 2 s, expected render ${EXPECTED_RENDER_SECONDS} s): ${JSON.stringify(shown)}`);
		console.log(`--service ${reading}: wait_for_job then printed status ${finished.json?.structuredContent?.status} after ${(finished.ms / 1000).toFixed(1)} s; bad input exit ${bad.code} with 0 requests; the same HTTP call twice made ${madeByRepeat} job; the key in no output`);
		for (const transport of ['stdio', 'HTTP']) {
			for (const era of [full, other]) {
				const flag = ERA_FLAGS[era].join(' ') || 'no --protocol-era';
				const inspectorSaid = era === full ? `the Inspector printed protocolVersion ${reported.get(transport)} for initialize; ` : '';
				console.log(`--service ${reading}: ${transport}, ${flag}: ${inspectorSaid}on the wire: ${evidence.get(`${transport} ${era}`)}`);
			}
		}
	} finally {
		await sandbox.close();
	}
}

async function main(): Promise<void> {
	assert.ok(INSPECTOR, 'INSPECTOR must name the Inspector launcher (mcp/ci.sh sets it)');
	const scratch = mkdtempSync(join(tmpdir(), 'omni-video-mcp-inspector-'));
	writeFileSync(join(scratch, 'stdin-copier.cjs'), STDIN_COPIER);
	try {
		for (const reading of READINGS) await onReading(reading, scratch);
	} finally {
		rmSync(scratch, { recursive: true, force: true });
	}
}

main().then(
	() => process.exit(0),
	(error: unknown) => {
		console.error(error);
		process.exit(1);
	},
);
