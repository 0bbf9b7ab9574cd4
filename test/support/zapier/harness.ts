/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test harness, never shipped */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as zapierCore from 'zapier-platform-core';
import { createAppTester, type Bundle } from 'zapier-platform-core';
import App from '../../../zapier/src';
import type { ReceivedCallback } from '../receiver';

export { App };

/** Zapier's own test runner for the app (the handler Zapier runs, in process). */
export const appTester = createAppTester(App);

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
export async function runWithCallbackUrl(method: string, bundle: Partial<Bundle>, callbackUrl: string): Promise<StepOutput> {
	// Exported by zapier-platform-core (what the tester wraps) but missing from its typings.
	const { createAppHandler } = zapierCore as unknown as { createAppHandler: (app: object) => (event: object) => Promise<StepOutput> };
	const handler = createAppHandler(App);
	return handler({ command: 'execute', method, bundle, callback_url: callbackUrl, zcacheTestObj: {} });
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
