/* eslint-disable @n8n/community-nodes/no-restricted-imports -- end-to-end tooling, never shipped */
/**
 * The load balancer in front of scaled-out n8n, as n8n's Helm chart (n8n-io/n8n-hosting,
 * charts/n8n, ingress-webhook.yaml) lays it out: `/webhook/`, `/webhook-waiting/`, `/form/`,
 * `/form-waiting/` and `/mcp/` go to the webhook processors, everything else to main. A Service in
 * front of several pods, behind an ingress, shares requests out one by one: here round-robin per
 * request, so two callbacks of one execution land on different processes, as they do there.
 *
 * Bodies and headers are streamed through untouched (the callbacks' signature covers the raw body
 * and the `webhook-*` headers). Every request it forwards is recorded with the process that took
 * it and that process's answer, which is how the checks say which process took each callback.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Backend {
	name: string;
	port: number;
}

export interface ProxiedRequest {
	method: string;
	path: string;
	backend: string;
	/** The backend's status, or 502 when it could not be reached. */
	status: number;
	at: number;
}

/** The paths n8n's chart routes to its webhook processors. */
export const WEBHOOK_PREFIXES = ['/webhook/', '/webhook-waiting/', '/form/', '/form-waiting/', '/mcp/'];

export interface RoundRobinProxy {
	url: string;
	log: ProxiedRequest[];
	close(): Promise<void>;
}

/** Starts the proxy on a free loopback port. */
export async function startRoundRobinProxy(options: { main: Backend; webhooks: Backend[] }): Promise<RoundRobinProxy> {
	const log: ProxiedRequest[] = [];
	let next = 0;
	const pick = (path: string): Backend => {
		if (!WEBHOOK_PREFIXES.some((prefix) => path.startsWith(prefix))) return options.main;
		const backend = options.webhooks[next % options.webhooks.length];
		next++;
		return backend;
	};
	const agent = new http.Agent({ keepAlive: true });
	const server = http.createServer((req, res) => {
		const path = req.url ?? '/';
		const backend = pick(path);
		const entry: ProxiedRequest = { method: req.method ?? 'GET', path, backend: backend.name, status: 502, at: Date.now() };
		log.push(entry);
		const upstream = http.request(
			{ host: '127.0.0.1', port: backend.port, method: req.method, path, headers: { ...req.headers, 'x-forwarded-for': req.socket.remoteAddress ?? '127.0.0.1', 'x-forwarded-proto': 'http' }, agent },
			(answer) => {
				entry.status = answer.statusCode ?? 502;
				res.writeHead(entry.status, answer.headers);
				answer.pipe(res);
			},
		);
		upstream.on('error', (error) => {
			if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
			res.end(`proxy: ${backend.name} unreachable: ${error.message}`);
		});
		req.pipe(upstream);
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	return {
		url,
		log,
		close: () =>
			new Promise<void>((resolve) => {
				agent.destroy();
				server.closeAllConnections();
				server.close(() => resolve());
			}),
	};
}
