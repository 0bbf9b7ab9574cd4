import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { startSandbox, type Sandbox } from '../../../sandbox';
import { createToolContext, type ToolContext } from '../../src/context';
import type { ToolCall } from '../../src/toolCall';
import { clientOverHttp, clientOverStdio, type CallOptions, type ClientKind, type McpClient } from './clients';
import { readSettings } from '../../src/settings';
import { MemoryStore, type StateStore } from '../../src/state/store';

/** The built bin, as `npx omni-video-mcp` runs it (jest's globalSetup builds it when stale). */
export const CLI = join(__dirname, '..', '..', 'dist', 'cli.js');

export type Reading = 'default' | 'spec';
export const READINGS: Reading[] = ['default', 'spec'];

/**
 * Each end-to-end suite runs once on each reading of the service and once on each protocol era:
 * the era is the client's side, the reading the service's, so one run of each pair covers both
 * without the four of their product. The modern run negotiates as Claude Code and the Inspector
 * 2.x do (auto, asserted modern); the 2025 run is the last 1.x SDK, as most 2025 clients are built.
 */
export interface Run {
	reading: Reading;
	client: ClientKind;
}
export const RUNS: Run[] = [
	{ reading: 'default', client: 'auto' },
	{ reading: 'spec', client: 'v1' },
];
/** describe.each's title arguments for RUNS. */
export const RUN_ROWS = RUNS.map((run) => [run.reading, run.client, run] as const);

/** Sign-in's secret as an operator makes one (`openssl rand -base64 32`), the same on every replica of a test. */
export const SIGN_IN_SECRET = 'test-secret-0123456789-abcdefghijklmnopqrstuvwxyz';

/** Sandbox renders take 30-90 s divided by this: 3-9 s, and the server is told to expect 6 s. */
export const SPEED = 10;
export const EXPECTED_RENDER_SECONDS = '6';

export interface Connected {
	client: McpClient;
	/** Everything the server wrote to stderr (its log), for the key-in-no-output check. */
	log(): string;
	close(): Promise<void>;
}

export function sandboxFor(reading: Reading, options: Parameters<typeof startSandbox>[0] = {}): Promise<Sandbox> {
	return startSandbox({ port: 0, speed: SPEED, service: reading, ...options });
}

/** A records folder of a test's own (never the user's state folder); the same folder is the same machine's records. */
export function stateDir(): string {
	return mkdtempSync(join(tmpdir(), 'omni-video-mcp-state-'));
}

/** The server's environment against this sandbox: its key and base URL, and the test's settings. */
export function serverEnv(sandbox: Sandbox, extra: Record<string, string> = {}): Record<string, string> {
	return {
		PATH: process.env.PATH ?? '',
		OMNI_VIDEO_MCP_STATE_DIR: stateDir(),
		OMNI_VIDEO_BASE_URL: sandbox.url,
		OMNI_VIDEO_API_KEY: sandbox.keys.pro,
		OMNI_VIDEO_PLAN: 'pro',
		OMNI_VIDEO_EXPECTED_RENDER_SECONDS: EXPECTED_RENDER_SECONDS,
		...extra,
	};
}

/** A client of that kind on the server over stdio, the server a child process of the test. */
export async function overStdio(env: Record<string, string>, args: string[] = [], kind: ClientKind = 'auto'): Promise<Connected> {
	let log = '';
	const client = await clientOverStdio(kind, { command: process.execPath, args: [CLI, ...args], env }, (chunk) => (log += chunk));
	return { client, log: () => log, close: () => client.close() };
}

export interface HttpServer {
	url: string;
	process: ChildProcess;
	log(): string;
	stop(): Promise<void>;
}

/** The server over Streamable HTTP on a free loopback port, as `omni-video-mcp --http --port 0` starts it. */
export async function httpServer(env: Record<string, string>, args: string[] = [], port = 0): Promise<HttpServer> {
	const child = spawn(process.execPath, [CLI, '--http', '--port', String(port), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
	let log = '';
	const url = await new Promise<string>((resolve, reject) => {
		const onData = (chunk: Buffer) => {
			log += chunk.toString('utf8');
			const found = /Streamable HTTP on (\S+)/.exec(log);
			if (found) resolve(found[1]);
		};
		child.stderr.on('data', onData);
		child.stdout.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
		child.once('exit', (code) => reject(new Error(`the server exited (${code}): ${log}`)));
	});
	return {
		url,
		process: child,
		log: () => log,
		stop: () =>
			new Promise<void>((resolve) => {
				if (child.exitCode !== null || child.signalCode !== null) return resolve();
				child.once('exit', () => resolve());
				child.kill('SIGTERM');
			}),
	};
}

/** A client of that kind over Streamable HTTP, the key in the bearer header as n8n's MCP Client Tool sends it. */
export async function overHttp(url: string, apiKey?: string, kind: ClientKind = 'auto'): Promise<Connected> {
	const client = await clientOverHttp(kind, url, apiKey ? { Authorization: `Bearer ${apiKey}` } : {});
	return { client, log: () => '', close: () => client.close() };
}

/** A tool's result, with its structured content typed loosely for assertions. */
export async function call(client: McpClient, name: string, args: Record<string, unknown>, options: CallOptions = {}) {
	const result: CallToolResult = await client.callTool({ name, arguments: args }, options);
	return { ...result, output: (result.structuredContent ?? {}) as Record<string, unknown>, text: result.content.map((c) => ('text' in c ? c.text : '')).join('\n') };
}

/**
 * Whether a result tells the agent of a rate limit: an error, or words in its message (not its data,
 * where a timestamp such as 12:00:18.429Z holds "429").
 */
export function mentionsRateLimit(result: { isError?: boolean; output: Record<string, unknown>; text: string }): boolean {
	const words = result.isError ? result.text : String(result.output.message ?? '');
	return /\b429\b|rate.?limit|too many requests|concurrency.?limit/i.test(words);
}

/** Counts from the sandbox's own journal: what the service saw, whatever the server says. */
export function counts(sandbox: Sandbox) {
	const api = sandbox.journal.filter((entry) => entry.path.startsWith('/api/'));
	return {
		requests: api.length,
		creates: api.filter((entry) => entry.method === 'POST' && entry.path === '/api/v1/generate').length,
		refused429: api.filter((entry) => entry.status === 429).length,
		jobs: sandbox.jobs.all.size,
	};
}

/** A tool call as stdio gives it: no bearer token (the environment's key), never cancelled. */
export const NO_AUTH: ToolCall = { signal: new AbortController().signal };

/** The server's tool context in the test's own process, against this sandbox, on a store of its own (or the one given, shared as by processes). */
export function inProcessContext(sandbox: Sandbox, store: StateStore = new MemoryStore()): ToolContext {
	return createToolContext(readSettings([], { ...serverEnv(sandbox), OMNI_VIDEO_MCP_STATE_DIR: 'none' }), store);
}
