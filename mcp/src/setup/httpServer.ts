import { randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, isInitializeRequest, type ClientCapabilities } from '@modelcontextprotocol/server';
import { parseJob, verifyWebhookSignature, type JobRecord } from '../../../core';
import { rendersViews } from '../appView';
import { legacyCallId } from '../cancels';
import { CALLBACK_PATH } from '../connection';
import { OperatorEndpoints } from '../operatorEndpoints';
import { STORE_RETRY_SECONDS } from '../state/redisStore';
import type { StateStore } from '../state/store';
import type { ToolContext } from '../context';
import { createServer } from '../server';
import type { BearerAccess, CallAuth } from '../signIn/bearerAccess';
import { startSignIn } from './signIn';
import { callKey, type ToolCall } from '../toolCall';

export interface RunningHttpServer {
	url: string;
	close(): Promise<void>;
}

/** How a 2025 client's session id begins when the client renders MCP Apps views. */
const VIEWS_SESSION = 'views-';
/** Where ChatGPT's directory reads the domain verification token (OMNI_VIDEO_MCP_OPENAI_CHALLENGE). */
export const OPENAI_CHALLENGE_PATH = '/.well-known/openai-apps-challenge';

function refuse(res: ServerResponse, status: number, message: string, code = -32000): void {
	res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

function bearer(req: IncomingMessage): string | undefined {
	const match = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
	return match?.[1].trim() || undefined;
}

/**
 * Streamable HTTP at /mcp for both protocol eras, with no session kept in any process: each
 * request is served on its own by a server the SDK makes for it, every record a call needs being
 * in the shared store, so that any replica behind a proxy answers any request. 2026-07-28 clients
 * send each request with its version and capabilities, and cancel a call by closing its stream;
 * 2025 clients initialize first and cancel with a request of their own (see CallCancels). A
 * browser page may call only from an allowed Origin, and only a Host naming this server is
 * answered (a DNS-rebinding page names its own). Beside it, for the operator, /healthz, /readyz
 * (the records `store` answers) and /metrics (see OperatorEndpoints).
 */
export async function startHttpServer(context: ToolContext, store: StateStore): Promise<RunningHttpServer> {
	const { host, port, allowedOrigins, publicUrl } = context.settings;
	const signIn = await startSignIn(context, store);
	// Behind a proxy on the same machine, requests name the public address.
	const publicHost = publicUrl === undefined ? undefined : new URL(publicUrl).host;
	// A 2025 client's later requests carry no capabilities: its session id, given at its initialize, says whether it renders views.
	const mcp = createMcpHandler((request) => createServer(context, { views: request.requestInfo?.headers.get('mcp-session-id')?.startsWith(VIEWS_SESSION) === true }), { legacy: 'stateless' });
	const serveMcp = toNodeHandler(mcp);
	const operator = new OperatorEndpoints(store, context.say);
	let ownOrigins: string[] = [];

	const handle = async (req: IncomingMessage, res: ServerResponse) => {
		const path = new URL(req.url ?? '/', 'http://server').pathname;
		// The service's callbacks come from outside, through whatever proxy gives the public URL: they are
		// verified by signature or by a lookup, not by where they come from.
		if (context.settings.publicUrl !== undefined && path.startsWith(CALLBACK_PATH)) return handleCallback(context, req, res, path.slice(CALLBACK_PATH.length));
		const hostHeader = req.headers.host ?? '';
		const hostOk = !isLoopback(host) || /^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/.test(hostHeader) || hostHeader === publicHost;
		// Sign-in is visited by people's browsers and called by apps from anywhere: it checks its own posts (see SignInPage).
		if (signIn?.serves(path)) return hostOk ? signIn.handle(req, res, path) : refuse(res, 403, `Host ${hostHeader} is not this server.`);
		// ChatGPT's check that the server's domain is the app's: the token its dashboard gave, as plain text.
		if (path === OPENAI_CHALLENGE_PATH && context.settings.openaiChallenge !== undefined && (req.method === 'GET' || req.method === 'HEAD')) {
			res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }).end(req.method === 'GET' ? context.settings.openaiChallenge : undefined);
			return;
		}
		if (path !== '/mcp' && !operator.serves(path)) return refuse(res, 404, 'Not found: the MCP endpoint is /mcp.');
		const origin = req.headers.origin;
		if (origin !== undefined && !allowedOrigins.includes(origin) && !ownOrigins.includes(origin)) {
			return refuse(res, 403, `Origin ${origin} is not allowed: start the server with --allow-origin ${origin} to let that page call it.`);
		}
		if (!hostOk) return refuse(res, 403, `Host ${hostHeader} is not this server.`);
		if (path !== '/mcp') return operator.serve(req, res, path);
		const token = bearer(req);
		let access: BearerAccess = { ok: true };
		if (signIn) {
			try {
				access = await signIn.gate.check(token);
			} catch {
				res.writeHead(503, { 'retry-after': String(STORE_RETRY_SECONDS), 'content-type': 'application/json' }).end(JSON.stringify({ error: 'The records cannot be reached right now to check the token: try again shortly.' }));
				return;
			}
			if (!access.ok) {
				res.setHeader('www-authenticate', signIn.gate.challenge(access));
				return refuse(res, access.status, access.message);
			}
		}
		// The SDK hands this on to each tool call as ctx.http.authInfo: a token's account, or the bearer API key.
		const auth: CallAuth | undefined = access.auth ?? (token ? { token, clientId: 'bearer', scopes: [] } : undefined);
		if (auth) Object.assign(req, { auth });
		// A 2026-07-28 request names its method in its Mcp-Method header: neither an initialize nor a
		// 2025 cancellation, it goes to the SDK as sent (which checks the header against the body).
		if (req.method !== 'POST' || req.headers['mcp-method'] !== undefined) return serveMcp(req, res);
		const body = await readJson(req);
		if (body === undefined) return refuse(res, 400, 'Parse error: the body is not JSON.', -32700);
		await legacyMessages(context, req, res, body, callKey({ http: { authInfo: auth } }));
		await serveMcp(req, res, body);
	};

	const server = http.createServer((req, res) => {
		handle(req, res).catch((error: unknown) => {
			if (!res.headersSent) refuse(res, 500, error instanceof Error ? error.message : String(error));
			else res.destroy();
		});
	});
	// A balancer pools its connections and keeps one idle up to a minute (AWS's default: 60 s); with
	// Node's 5 s the server closes one the balancer is about to reuse, and the balancer answers 502.
	server.keepAliveTimeout = 65_000;
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
			await mcp.close().catch(() => undefined);
			server.closeAllConnections();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
}

/**
 * What a 2025 client's POST asks of this server beside the SDK's answer. Its initialize gets a
 * session id: no process keeps anything under it, every replica takes it, and the client sends it
 * with each request, so that its cancellation names its own call. Its cancellation stops the
 * call wherever it runs, through the shared records.
 */
async function legacyMessages(context: ToolContext, req: IncomingMessage, res: ServerResponse, body: unknown, key: Pick<ToolCall, 'apiKey' | 'plan'>): Promise<void> {
	const messages = Array.isArray(body) ? body : [body];
	const initialize = messages.find((message) => isInitializeRequest(message));
	if (initialize) res.setHeader('mcp-session-id', `${rendersViews((initialize as { params?: { capabilities?: ClientCapabilities } }).params?.capabilities) ? VIEWS_SESSION : ''}${randomUUID()}`);
	const sessionId = req.headers['mcp-session-id'];
	if (typeof sessionId !== 'string') return;
	for (const message of messages) {
		const requestId = cancelledRequest(message);
		if (requestId === undefined) continue;
		try {
			await context.cancels.cancel(legacyCallId(context.connect(key).fingerprint, sessionId, requestId));
		} catch {
			// No key, or the records out of reach: the call runs to its bound, its create kept either way.
		}
	}
}

function cancelledRequest(message: unknown): string | number | undefined {
	const { method, params } = (message ?? {}) as { method?: unknown; params?: { requestId?: unknown } };
	const requestId = params?.requestId;
	return method === 'notifications/cancelled' && (typeof requestId === 'string' || typeof requestId === 'number') ? requestId : undefined;
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
