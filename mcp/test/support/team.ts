import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sandbox } from '../../../sandbox';
import type { ClientKind } from './clients';
import { httpServer, overHttp, sandboxFor, serverEnv, SIGN_IN_SECRET, type Connected, type HttpServer, type Reading } from './mcpHarness';

/** Debian's redis-server, as a team runs it (docs/mcp.md#running-it-for-a-team): on loopback, its own port and folder. */
export const REDIS_SERVER = '/usr/bin/redis-server';

export interface RedisServer {
	url: string;
	/** Stops it (SIGTERM: it writes its append-only file first) and starts it again on the same port and folder. */
	restart(): Promise<void>;
	stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
	const server = net.createServer();
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
	const { port } = server.address() as AddressInfo;
	await new Promise<void>((resolve) => server.close(() => resolve()));
	return port;
}

/**
 * A redis-server of the test's own, kept on disk as a team's should be (appendonly, every write
 * synced), so that a restart keeps the records; with a password when given, or as a node of a
 * cluster.
 */
export async function startRedis(options: { password?: string; clusterNode?: boolean; tls?: boolean } = {}): Promise<RedisServer & { port: number; certificate?: string }> {
	const port = await freePort();
	const dir = mkdtempSync(join(tmpdir(), 'omni-video-mcp-redis-'));
	let child: ChildProcess | undefined;
	const certificate = options.tls ? selfSignedCertificate(dir) : undefined;
	const extra = [
		...(options.password ? ['--requirepass', options.password] : []),
		...(options.clusterNode ? ['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, 'nodes.conf')] : []),
		...(certificate ? ['--port', '0', '--tls-port', String(port), '--tls-cert-file', certificate, '--tls-key-file', join(dir, 'redis.key'), '--tls-ca-cert-file', certificate, '--tls-auth-clients', 'no'] : []),
	];
	const start = async () => {
		const started = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always', '--daemonize', 'no', ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
		child = started;
		let log = '';
		await new Promise<void>((resolve, reject) => {
			started.stdout?.on('data', (chunk: Buffer) => {
				log += chunk.toString('utf8');
				if (/Ready to accept connections/.test(log)) resolve();
			});
			started.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${log}`)));
		});
	};
	const stop = () =>
		new Promise<void>((resolve) => {
			const running = child;
			if (!running || running.exitCode !== null || running.signalCode !== null) return resolve();
			running.once('exit', () => resolve());
			running.kill('SIGTERM');
		});
	await start();
	return {
		port,
		certificate,
		url: `${certificate ? 'rediss' : 'redis'}://${options.password ? `:${options.password}@` : ''}127.0.0.1:${port}`,
		restart: async () => {
			await stop();
			await start();
		},
		stop,
	};
}

/** A certificate for 127.0.0.1 (Debian's openssl), its own authority: a client trusts it as a team trusts its own CA. */
function selfSignedCertificate(dir: string): string {
	const certificate = join(dir, 'redis.crt');
	execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'redis.key'), '-out', certificate, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-addext', 'basicConstraints=critical,CA:TRUE'], { stdio: 'ignore' });
	return certificate;
}

/** Debian's redis-cli, which makes a cluster of running nodes. */
const REDIS_CLI = '/usr/bin/redis-cli';

/** A Redis Cluster of three masters (no replicas), each a redis-server of the test's own; its url names the first node. */
export async function startRedisCluster(): Promise<RedisServer> {
	const nodes = await Promise.all([0, 1, 2].map(() => startRedis({ clusterNode: true })));
	const addresses = nodes.map((node) => `127.0.0.1:${node.port}`);
	await new Promise<void>((resolve, reject) => {
		const made = spawn(REDIS_CLI, ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'], { stdio: ['ignore', 'pipe', 'pipe'] });
		let log = '';
		made.stdout.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
		made.stderr.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
		made.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`redis-cli --cluster create exited ${code}: ${log}`))));
	});
	// Every node agrees the cluster is up before a client is let at it.
	for (const node of nodes) {
		for (let tries = 0; ; tries++) {
			const state = await new Promise<string>((resolve) => {
				const asked = spawn(REDIS_CLI, ['-p', String(node.port), 'cluster', 'info'], { stdio: ['ignore', 'pipe', 'ignore'] });
				let out = '';
				asked.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
				asked.once('exit', () => resolve(out));
			});
			if (/cluster_state:ok/.test(state)) break;
			if (tries > 100) throw new Error(`the cluster did not come up: ${state}`);
			await new Promise((resolve) => setTimeout(resolve, 100));
		}
	}
	return {
		url: nodes[0].url,
		restart: async () => {
			for (const node of nodes) await node.restart();
		},
		stop: async () => {
			await Promise.all(nodes.map((node) => node.stop()));
		},
	};
}

/** One request as the proxy saw it: where it went, and what it said of itself. */
export interface Routed {
	replica: number;
	/** The request's path (the sign-in's steps are told apart by it). */
	path: string;
	/** The JSON-RPC method of its body (the first, for a batch). */
	method?: string;
	/** The 2026-07-28 headers, which a proxy can route on without reading the body. */
	mcpMethod?: string;
	mcpName?: string;
	protocolVersion?: string;
}

export interface Proxy {
	url: string;
	/** Which backend each request went to, by index, in order. */
	routed: number[];
	/** Each request, in order. */
	requests: Routed[];
	close(): Promise<void>;
}

/**
 * A round-robin HTTP proxy with no sticky routing, as a team's load balancer without session
 * affinity: each request (not each connection) goes to the next backend that is up; one that
 * cannot be connected to is skipped, as a balancer's health check would.
 */
export async function startProxy(backends: () => string[]): Promise<Proxy> {
	let next = 0;
	const routed: number[] = [];
	const requests: Routed[] = [];
	const header = (value: string | string[] | undefined) => (typeof value === 'string' ? value : undefined);
	const methodOf = (body: Buffer): string | undefined => {
		try {
			const message: unknown = JSON.parse(body.toString('utf8'));
			const first = (Array.isArray(message) ? message[0] : message) as { method?: unknown } | undefined;
			return typeof first?.method === 'string' ? first.method : undefined;
		} catch {
			return undefined;
		}
	};
	const server = http.createServer(async (req, res) => {
		// Read whole first (an MCP message is small), so that a backend found down is skipped with the body intact.
		const chunks: Buffer[] = [];
		for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
		const body = Buffer.concat(chunks);
		const targets = backends();
		const forward = (tries: number) => {
			const index = next++ % targets.length;
			const target = new URL(req.url ?? '/', targets[index]);
			// A connection of its own each time (no keep-alive pool): a stopped backend is then refused at once.
			const upstream = http.request(target, { method: req.method, headers: { ...req.headers, host: target.host }, agent: false }, (answer) => {
				routed.push(index);
				requests.push({ replica: index, path: new URL(req.url ?? '/', 'http://proxy').pathname, method: methodOf(body), mcpMethod: header(req.headers['mcp-method']), mcpName: header(req.headers['mcp-name']), protocolVersion: header(req.headers['mcp-protocol-version']) });
				res.writeHead(answer.statusCode ?? 502, answer.headers);
				answer.pipe(res);
			});
			upstream.on('error', (error: NodeJS.ErrnoException) => {
				// Down (refused or reset as it connects): the next one takes the request.
				if (error.syscall === 'connect' && tries < targets.length && !res.headersSent) return forward(tries + 1);
				if (!res.headersSent) res.writeHead(502).end();
				else res.destroy();
			});
			res.on('close', () => upstream.destroy());
			upstream.end(body);
		};
		forward(1);
	});
	// A balancer keeps an idle client connection open far longer than Node's 5 s (AWS's: 60 s), so a
	// client's own idle timer closes it first; with Node's default, a test that blocks the event loop
	// past 5 s (a synchronous `members` command) reuses a socket the proxy is closing: ECONNRESET.
	server.keepAliveTimeout = 65_000;
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}/mcp`,
		routed,
		requests,
		close: async () => {
			server.closeAllConnections();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
}

export interface Team {
	sandbox: Sandbox;
	redis: RedisServer;
	replicas: HttpServer[];
	proxy: Proxy;
	/** A client through the proxy, with the Pro key as its bearer header. */
	connect(): Promise<Connected>;
	close(): Promise<void>;
}

export interface TeamOptions {
	/** The replicas' environment besides the harness's. */
	extra?: Record<string, string>;
	replicaCount?: number;
	/** The replicas' --public-url is the proxy's, so the service's callbacks reach any of them; 'signed' gives them the key's webhook secret. */
	callbacks?: 'signed' | 'unsigned';
	/** Real speed, the server on its own estimates (the bench); else the harness's 10x with a render time given. */
	realSpeed?: boolean;
	/** The clients connect() makes (the harness's default: auto, modern). */
	client?: ClientKind;
	/** The records in a Redis Cluster of three nodes rather than one Redis. */
	cluster?: boolean;
}

/** A sandbox, a Redis, replicas on it behind a round-robin proxy: a team's layout on loopback. */
export async function startTeam(reading: Reading, options: TeamOptions = {}): Promise<Team> {
	const { extra = {}, replicaCount = 3, callbacks, realSpeed = false, client: kind, cluster = false } = options;
	// The sandbox calls back plain http on loopback (the proxy here) only when told to.
	const sandbox = await sandboxFor(reading, { insecureCallbacks: callbacks !== undefined, ...(realSpeed ? { speed: 1 } : {}) });
	const redis = cluster ? await startRedisCluster() : await startRedis();
	// The key comes with each request, as a team's clients send it; the records are Redis's alone.
	// With a public URL sign-in is on: bearer keys go on working beside it.
	const { OMNI_VIDEO_MCP_STATE_DIR: _dir, OMNI_VIDEO_API_KEY: _key, ...env } = serverEnv(sandbox, {
		...extra,
		...(callbacks === 'signed' ? { OMNI_VIDEO_WEBHOOK_SECRET: sandbox.webhookSecret } : {}),
		...(callbacks ? { OMNI_VIDEO_MCP_SECRET: SIGN_IN_SECRET } : {}),
	});
	if (realSpeed) delete env.OMNI_VIDEO_EXPECTED_RENDER_SECONDS;
	const replicas: HttpServer[] = [];
	const proxy = await startProxy(() => replicas.map((replica) => replica.url));
	const publicUrl = callbacks ? ['--public-url', proxy.url.replace(/\/mcp$/, '')] : [];
	replicas.push(...(await Promise.all(Array.from({ length: replicaCount }, () => httpServer(env, ['--redis', redis.url, ...(cluster ? ['--redis-cluster'] : []), ...publicUrl])))));
	const clients: Connected[] = [];
	return {
		sandbox,
		redis,
		replicas,
		proxy,
		connect: async () => {
			const client = await overHttp(proxy.url, sandbox.keys.pro, kind);
			clients.push(client);
			return client;
		},
		close: async () => {
			await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
			await proxy.close();
			await Promise.all(replicas.map((replica) => replica.stop()));
			await redis.stop();
			await sandbox.close();
		},
	};
}
