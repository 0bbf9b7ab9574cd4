/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-restricted-globals -- test harness, never shipped */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import * as zapierCore from 'zapier-platform-core';
import { createAppTester, type Bundle } from 'zapier-platform-core';
import App from '../../../zapier/src';
import type { ReceivedCallback } from '../receiver';

export { App };

/** Zapier's own test runner for the app (the handler Zapier runs, in process). */
export const appTester = createAppTester(App);

/**
 * Zapier's handler patches node:http's and node:https's `request` for its logs at each run
 * (create-http-patch.js) and never puts them back. In a jest worker every test file shares those
 * modules, and the patch takes two arguments: a later file's `http.request(url, options, callback)`
 * lost its callback, and its request was never answered (the MCP tests' round-robin proxy, when a
 * cold run ordered a Zapier file before them). Each test here leaves the modules as it found them.
 */
const unpatched = [http, https].map((module) => ({ module, request: module.request }));
afterEach(() => {
	for (const { module, request } of unpatched) {
		Object.assign(module, { request });
		// The patch marks a module it patched and then leaves it alone: the next run patches it afresh.
		delete (module as { patchedByZapier?: boolean }).patchedByZapier;
	}
});

/** Runs one of the app's functions, named by its path in the app (`creates.uploadImage.operation.perform`). */
export function runStep(method: string, bundle: Record<string, unknown>, tester = appTester): Promise<unknown> {
	const found = method.split('.').reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], App);
	if (typeof found !== 'function') throw new Error(`The app has no function at ${method}`);
	// The tester finds the function in the app; its typings want each operation's own bundle type.
	return (tester as unknown as (func: unknown, input: object) => Promise<unknown>)(found, bundle);
}

/** What a step run returns to Zapier: its results and, for a parked step, status CALLBACK. */
export interface StepOutput {
	results: unknown;
	status?: string;
}

/**
 * Runs a step through the same handler as `createAppTester`, but with a callback URL of our own:
 * the tester's is fixed to a Zapier staging host, and tests reach nothing but loopback.
 */
export async function runWithCallbackUrl(
	method: string,
	bundle: Partial<Bundle>,
	callbackUrl: string,
	zcacheTestObj: Record<string, unknown> = {},
): Promise<StepOutput> {
	// Exported by zapier-platform-core (what the tester wraps) but missing from its typings.
	const { createAppHandler } = zapierCore as unknown as { createAppHandler: (app: object) => (event: object) => Promise<StepOutput> };
	const handler = createAppHandler(App);
	// zcacheTestObj is Zapier's own in-memory stand-in for its cache: pass one object to two runs
	// and the second sees what the first stored, as a replay does.
	return handler({ command: 'execute', method, bundle, callback_url: callbackUrl, zcacheTestObj });
}

/**
 * Zapier's cache as its RPC service keeps it, for runs through the handler: entries per scope (a
 * key written with ['auth'] is not found without it) and `nx` writes that fail when the entry
 * exists. zapier-platform-core's own test stand-in (zcacheTestObj) models neither.
 */
export async function zapierRpc(): Promise<{ url: string; entries: Map<string, string>; scopes: string[]; close(): Promise<void> }> {
	const entries = new Map<string, string>();
	/** The scope of every cache call, in order: reads must use the scope writes used. */
	const scopes: string[] = [];
	const { server, url } = await listen((req, res) => {
		let body = '';
		req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
		req.on('end', () => {
			const { id, method, params } = JSON.parse(body) as { id: string; method: string; params: unknown[] };
			const [key, value, , scope, nx] = params as [string, string, number | null, string[] | null, boolean | null];
			// get and delete take (key, scope); set takes (key, value, ttl, scope, nx).
			const scoped = (method === 'zcache_set' ? scope : (params[1] as string[] | null)) ?? [];
			scopes.push(`${method}:${scoped.join('+')}`);
			const name = `${scoped.join('+')}|${key}`;
			let result: unknown;
			if (method === 'zcache_get') result = entries.get(name) ?? null;
			else if (method === 'zcache_set') {
				result = !(nx && entries.has(name));
				if (result) entries.set(name, value);
			} else if (method === 'zcache_delete') result = entries.delete(name);
			res.writeHead(200, { 'Content-Type': 'application/json' });
			res.end(JSON.stringify(method.startsWith('zcache_') ? { id, result } : { id, error: `No RPC method ${method} here` }));
		});
	});
	// The RPC client needs a credential: a deploy key, as in Zapier's own app tests. (An event token
	// would do too, but with one the handler also streams its logs to Zapier's log service.)
	process.env.ZAPIER_DEPLOY_KEY = 'test-deploy-key';
	const close = closer(server);
	return {
		url,
		entries,
		scopes,
		close: () => {
			delete process.env.ZAPIER_DEPLOY_KEY;
			return close();
		},
	};
}

/** Runs one function through Zapier's handler with its RPC calls (the cache) going to `rpcUrl`. */
export function runWithRpc(method: string, bundle: Partial<Bundle>, rpcUrl: string): Promise<StepOutput> {
	const { createAppHandler } = zapierCore as unknown as { createAppHandler: (app: object) => (event: object) => Promise<StepOutput> };
	return createAppHandler(App)({ command: 'execute', method, bundle, rpc_base: rpcUrl });
}

/** Runs a step and measures it: what it returned or threw, and how long it took. */
export async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value?: T; error?: Error }> {
	const started = Date.now();
	try {
		const value = await work();
		return { ms: Date.now() - started, value };
	} catch (error) {
		return { ms: Date.now() - started, error: error as Error };
	}
}

/** Zapier's errors carry their fields as JSON in `message`. */
export function zapierErrorFields(error: Error | undefined): { message?: string; code?: string; status?: number; delay?: number } {
	try {
		return JSON.parse(String(error?.message)) as { message?: string; code?: string; status?: number; delay?: number };
	} catch {
		return { message: error?.message };
	}
}

/** The connection fields a user fills in, for a sandbox key. */
export function authFor(baseUrl: string, apiKey: string, extra: Record<string, string> = {}): Record<string, string> {
	return { baseUrl, apiKey, plan: 'premium', ...extra };
}

/**
 * A delivery to a static hook, the way Zapier hands it to the trigger: the raw body and headers
 * (named `Http-Webhook-Id` and so on) plus the parsed body.
 */
export function hookBundle(delivery: ReceivedCallback): Pick<Bundle, 'rawRequest' | 'cleanedRequest'> {
	const headers: Record<string, string> = {};
	for (const [name, value] of Object.entries(delivery.headers)) {
		headers[`Http-${name.replace(/(^|-)([a-z])/g, (_m, dash: string, letter: string) => dash + letter.toUpperCase())}`] = value;
	}
	return {
		rawRequest: { method: 'POST', headers, content: delivery.body, querystring: '' },
		cleanedRequest: JSON.parse(delivery.body) as object,
	};
}

export interface SeenRequest {
	method: string;
	path: string;
	authorization?: string;
}

export interface LoopbackServer {
	url: string;
	seen: SeenRequest[];
	close(): Promise<void>;
}

/** A server that accepts connections and never answers: an API that hangs. */
export async function silentServer(): Promise<{ url: string; connections: () => number; close(): Promise<void> }> {
	const sockets = new Set<net.Socket>();
	let accepted = 0;
	const server = net.createServer((socket) => {
		accepted++;
		sockets.add(socket);
		socket.on('close', () => sockets.delete(socket));
		socket.resume();
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
	return {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
		connections: () => accepted,
		close: () =>
			new Promise<void>((resolve) => {
				for (const socket of sockets) socket.destroy();
				server.close(() => resolve());
			}),
	};
}

/** An ordinary website: 404 pages for every path, as a wrong Base URL would reach. */
export async function plainWebsite(): Promise<LoopbackServer> {
	const seen: SeenRequest[] = [];
	const { server, url } = await listen((req, res) => {
		seen.push({ method: req.method ?? '', path: req.url ?? '', authorization: req.headers.authorization });
		res.writeHead(404, { 'Content-Type': 'text/html', 'X-Request-Id': 'edge-1234' });
		res.end('<html><body><h1>404 Not Found</h1></body></html>');
	});
	return { url, seen, close: closer(server) };
}

/**
 * A file host that streams `size` bytes (a PNG header, then zeros) with Content-Length, minding
 * backpressure, and counts what it really sent: a client that stops reading stops it.
 */
export async function streamingFileHost(size: number): Promise<LoopbackServer & { sentBytes: () => number }> {
	const seen: SeenRequest[] = [];
	let sent = 0;
	const { server, url } = await listen((req, res) => {
		seen.push({ method: req.method ?? '', path: req.url ?? '', authorization: req.headers.authorization });
		res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': String(size) });
		const chunk = Buffer.alloc(64 * 1024);
		PNG_SIGNATURE.copy(chunk);
		let first = true;
		const pump = () => {
			while (sent < size && !res.destroyed) {
				const part = first ? chunk : chunk.fill(0, 0, PNG_SIGNATURE.length);
				first = false;
				const piece = part.subarray(0, Math.min(part.length, size - sent));
				sent += piece.length;
				if (!res.write(piece)) return void res.once('drain', pump);
			}
			if (sent >= size) res.end();
		};
		pump();
	});
	return { url, seen, sentBytes: () => sent, close: closer(server) };
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 73, 72, 68, 82]);

async function listen(handler: http.RequestListener): Promise<{ server: http.Server; url: string }> {
	const server = http.createServer(handler);
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
	return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function closer(server: http.Server): () => Promise<void> {
	return () =>
		new Promise<void>((resolve) => {
			server.closeAllConnections();
			server.close(() => resolve());
		});
}

/** A file host standing in for Zapier's file storage: serves `bytes` at any path, records requests. */
export async function fileHost(bytes: Buffer, contentType: string): Promise<LoopbackServer> {
	const seen: SeenRequest[] = [];
	const { server, url } = await listen((req, res) => {
		seen.push({ method: req.method ?? '', path: req.url ?? '', authorization: req.headers.authorization });
		if (req.url?.startsWith('/missing')) {
			res.writeHead(404, { 'Content-Type': 'text/plain' });
			res.end('no such file');
			return;
		}
		res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': String(bytes.length) });
		res.end(bytes);
	});
	return { url, seen, close: closer(server) };
}
