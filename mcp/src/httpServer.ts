import { randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { keyFingerprint, parseJob, verifyWebhookSignature, type JobRecord } from '../../core';
import { CALLBACK_PATH } from './connection';
import { STORE_RETRY_SECONDS } from './state/redisStore';
import type { ToolContext } from './context';
import { createServer } from './server';

interface Session {
	transport: StreamableHTTPServerTransport;
	/** The key the session was opened with: another key may not use it. */
	keyName: string;
}

export interface RunningHttpServer {
	url: string;
	close(): Promise<void>;
}

function refuse(res: ServerResponse, status: number, message: string): void {
	res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

function bearer(req: IncomingMessage): string | undefined {
	const match = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
	return match?.[1].trim() || undefined;
}

/**
 * Streamable HTTP at /mcp, one MCP session per client: a session's calls (and its cancellations)
 * reach the server that runs them; stateless when replicas share the records in Redis. A browser page may call only from an allowed Origin, and only
 * a Host naming this server is answered (a DNS-rebinding page names its own).
 */
export async function startHttpServer(context: ToolContext): Promise<RunningHttpServer> {
	const { host, port, allowedOrigins } = context.settings;
	const sessions = new Map<string, Session>();
	// With the records in Redis the server is one of several replicas behind a proxy that may send
	// each request to any of them: no session lives in one replica (see handleStateless).
	const stateless = context.settings.state.kind === 'redis';
	let ownOrigins: string[] = [];

	const handle = async (req: IncomingMessage, res: ServerResponse) => {
		const path = new URL(req.url ?? '/', 'http://server').pathname;
		// The service's callbacks come from outside, through whatever proxy gives the public URL: they are
		// verified by signature or by a lookup, not by where they come from.
		if (context.settings.publicUrl !== undefined && path.startsWith(CALLBACK_PATH)) return handleCallback(context, req, res, path.slice(CALLBACK_PATH.length));
		if (path !== '/mcp') return refuse(res, 404, 'Not found: the MCP endpoint is /mcp.');
		const origin = req.headers.origin;
		if (origin !== undefined && !allowedOrigins.includes(origin) && !ownOrigins.includes(origin)) {
			return refuse(res, 403, `Origin ${origin} is not allowed: start the server with --allow-origin ${origin} to let that page call it.`);
		}
		const hostHeader = req.headers.host ?? '';
		if (isLoopback(host) && !/^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/.test(hostHeader)) return refuse(res, 403, `Host ${hostHeader} is not this server.`);
		const token = bearer(req);
		const keyName = keyFingerprint(token ?? context.settings.envApiKey ?? '', context.settings.baseUrl);
		// The SDK hands this on to each tool call as extra.authInfo.
		if (token) Object.assign(req, { auth: { token, clientId: 'bearer', scopes: [] } });
		if (stateless) return handleStateless(context, req, res);
		const sessionId = req.headers['mcp-session-id'];
		if (typeof sessionId === 'string') {
			const session = sessions.get(sessionId);
			if (!session) return refuse(res, 404, 'Unknown or ended session: initialize a new one.');
			if (session.keyName !== keyName) return refuse(res, 403, 'This session was opened with another API key.');
			return session.transport.handleRequest(req, res);
		}
		if (req.method !== 'POST') return refuse(res, 400, 'No session: send an initialize request first.');
		const body = await readJson(req);
		if (!isInitializeRequest(body)) return refuse(res, 400, 'No session: send an initialize request first.');
		const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
			sessionIdGenerator: () => randomUUID(),
			onsessioninitialized: (id) => void sessions.set(id, { transport, keyName }),
		});
		transport.onclose = () => {
			if (transport.sessionId) sessions.delete(transport.sessionId);
		};
		await createServer(context).connect(transport);
		await transport.handleRequest(req, res, body);
	};

	const server = http.createServer((req, res) => {
		handle(req, res).catch((error: unknown) => {
			if (!res.headersSent) refuse(res, 500, error instanceof Error ? error.message : String(error));
			else res.destroy();
		});
	});
	await new Promise<void>((resolve, reject) => {
		server.once('error', reject);
		server.listen(port, host, () => resolve());
	});
	const address = server.address() as AddressInfo;
	const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
	ownOrigins = [`http://${shownHost}:${address.port}`, `http://localhost:${address.port}`];
	return {
		url: `http://${shownHost}:${address.port}/mcp`,
		async close() {
			await Promise.all([...sessions.values()].map((session) => session.transport.close().catch(() => undefined)));
			server.closeAllConnections();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
}

/**
 * Each request on its own, as the MCP spec allows a server that gives no session id: any replica
 * answers any request, every record a call needs being in the shared store. A call's progress and
 * result come on its own response; a cancellation sent as a separate request may reach another
 * replica, so a cancelled call runs to its bound (its create is never lost either way).
 */
async function handleStateless(context: ToolContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
	if (req.method !== 'POST') {
		res.writeHead(405, { allow: 'POST', 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'This server keeps no sessions (replicas behind a proxy): send each message as a POST.' }, id: null }));
		return;
	}
	const body = await readJson(req);
	const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
	const server = createServer(context);
	res.on('close', () => {
		void transport.close().catch(() => undefined);
		void server.close().catch(() => undefined);
	});
	await server.connect(transport);
	await transport.handleRequest(req, res, body);
}

function isLoopback(host: string): boolean {
	return host === '127.0.0.1' || host === 'localhost' || host === '::1';
}

/** The request's body as sent (at most 1 MB: an MCP message or a callback is small). */
async function readText(req: IncomingMessage): Promise<string> {
	const chunks: Buffer[] = [];
	let size = 0;
	for await (const chunk of req as AsyncIterable<Buffer>) {
		size += chunk.length;
		if (size > 1_000_000) throw new Error('The request body is over 1 MB.');
		chunks.push(chunk);
	}
	return Buffer.concat(chunks).toString('utf8');
}

async function readJson(req: IncomingMessage): Promise<unknown> {
	try {
		return JSON.parse(await readText(req));
	} catch {
		return undefined;
	}
}

/**
 * A job's callback, on whichever replica the proxy sends it to: checked, then noted in the shared
 * records, where the replica waiting for the job reads it. With the key's webhook secret only a
 * signed callback counts and it is the job's end; without one, the waiting replica confirms it with
 * one lookup. A job the records do not know is refused with nothing spent (forged or not ours); a
 * repeated callback changes nothing. Records unreachable: 503, and the service delivers again.
 */
async function handleCallback(context: ToolContext, req: IncomingMessage, res: ServerResponse, fingerprint: string): Promise<void> {
	if (req.method !== 'POST') return refuse(res, 405, 'Callbacks are POSTed by the Omni Video service.');
	const rawBody = await readText(req);
	let job: JobRecord;
	try {
		job = parseJob(JSON.parse(rawBody));
	} catch {
		return refuse(res, 400, 'The callback body is not an Omni Video job.');
	}
	const secret = context.settings.webhookSecret;
	if (secret) {
		const check = verifyWebhookSignature({ secret, headers: req.headers, rawBody, nowMs: Date.now() });
		if (!check.ok) return refuse(res, 401, `Signature rejected: ${check.reason}`);
	}
	let known: boolean;
	try {
		known = await context.watches.heard(fingerprint, job, secret !== undefined);
	} catch {
		res.writeHead(503, { 'retry-after': String(STORE_RETRY_SECONDS), 'content-type': 'application/json' }).end(JSON.stringify({ error: 'The records cannot be reached right now: deliver again later.' }));
		return;
	}
	if (!known) return refuse(res, 404, `Job ${job.id} is not one this server made.`);
	res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ received: job.id }));
}
