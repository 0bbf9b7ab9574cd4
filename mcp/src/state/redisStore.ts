import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { createClient, createCluster } from '@redis/client';
import { scriptSha, type RecordStep } from './recordStep';
import type { StateStore } from './store';

/** A replica says it runs this often; one silent for HEARTBEAT_TTL_MS is taken as stopped. */
const HEARTBEAT_MS = 2_000;
const HEARTBEAT_TTL_MS = 6_000;
/** Past this a command is taken as lost (Redis stopped mid-answer): the step fails, nothing is sent. */
const COMMAND_TIMEOUT_MS = 3_000;
/** A server that cannot reach Redis at its start stops after this, saying so. */
const CONNECT_WAIT_MS = 5_000;
/** After a failed step, how long an agent is told to wait: Redis reconnects within a second of its return. */
export const STORE_RETRY_SECONDS = 10;

/** Why a step on the team's records failed: said to the agent, with when to try again. */
export class StoreUnavailableError extends Error {
	readonly code = 'store_unavailable';
	constructor(where: string, cause: unknown) {
		super(
			`The team's Omni Video records (${where}) cannot be reached right now, so nothing was sent: a video is never created before its record is written. ` +
				`Call again in ${STORE_RETRY_SECONDS} s; a generate_video call with the same arguments never makes a second video. (${cause instanceof Error ? cause.message : String(cause)})`,
		);
	}
}

const SOCKET = { connectTimeout: 2_000, reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 1_000) };
const singleClient = (url: string) => createClient({ url, disableOfflineQueue: true, socket: SOCKET });
/** A cluster from one node's URL: the other nodes it reports are reached with the URL's credentials and TLS (rediss://). */
const clusterClient = (url: string) => {
	const { username, password, protocol } = new URL(url);
	const credentials = { ...(username ? { username: decodeURIComponent(username) } : {}), ...(password ? { password: decodeURIComponent(password) } : {}) };
	return createCluster({ rootNodes: [{ url }], defaults: { ...credentials, disableOfflineQueue: true, socket: { ...SOCKET, ...(protocol === 'rediss:' ? { tls: true as const } : {}) } } });
};
type SingleClient = ReturnType<typeof singleClient>;
type ClusterClient = ReturnType<typeof clusterClient>;

/** The commands the store sends: the same on one Redis and on a cluster (each to its key's node). */
interface Commands {
	get(key: string): Promise<string | null>;
	set(key: string, value: string, options: { PX: number }): Promise<unknown>;
	exists(key: string): Promise<number>;
	eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
	evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

export interface RedisOptions {
	/** The URL names one node of a Redis Cluster: the store finds the others and sends each key to its own. */
	cluster?: boolean;
}

/**
 * The records in Redis, shared by every replica on every machine that uses the same server and
 * prefix: each record one key holding its JSON with its own expiry, changed only by its steps, each
 * one Lua script (sent once, then named by its SHA), so a step moves one record and never waits on
 * another replica's. Keys that one step changes together share a hash tag (`{fingerprint}`), so a
 * Redis Cluster serves them. Each replica keeps a heartbeat key, so that a create whose sender
 * stopped is told from one still being answered. Commands are refused at once while Redis is
 * unreachable (no offline queue): a call fails and says so rather than hang past its client's budget.
 */
export class RedisStore implements StateStore {
	readonly where: string;
	readonly holder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
	private heartbeat: NodeJS.Timeout | undefined;

	private constructor(
		private readonly client: SingleClient | ClusterClient,
		cluster: boolean,
		private readonly commands: Commands,
		private readonly prefix: string,
		shownUrl: string,
	) {
		this.where = `Redis${cluster ? ' Cluster' : ''} at ${shownUrl}, prefix ${prefix}`;
	}

	/** Connects (failing when Redis is unreachable at start, so the server says so and stops). */
	static async open(url: string, say: (line: string) => void, options: RedisOptions = {}, prefix = 'omni-video-mcp:'): Promise<RedisStore> {
		const shownUrl = withoutPassword(url);
		let lastError = '';
		const client: SingleClient | ClusterClient = options.cluster ? clusterClient(url) : singleClient(url);
		// Said once per outage, not once per reconnect attempt.
		client.on('error', (error: unknown) => {
			const text = error instanceof Error ? error.message : String(error);
			if (text !== lastError) say(`omni-video-mcp: Redis at ${shownUrl}: ${text}`);
			lastError = text;
		});
		client.on('ready', () => {
			if (lastError !== '') say(`omni-video-mcp: Redis at ${shownUrl} is back`);
			lastError = '';
		});
		let timer: NodeJS.Timeout | undefined;
		try {
			// connect() goes on retrying while Redis is away: a server that cannot start says so instead.
			await Promise.race([
				client.connect(),
				new Promise<never>((_, reject) => {
					timer = setTimeout(() => reject(new Error(`Redis at ${shownUrl} did not answer within ${CONNECT_WAIT_MS / 1000} s: is it running, and is the URL right?`)), CONNECT_WAIT_MS);
				}),
			]);
		} catch (error) {
			await client.destroy();
			throw error;
		} finally {
			clearTimeout(timer);
		}
		// Both clients take these commands alike; their typings differ only in overloads the store does not use.
		const store = new RedisStore(client, options.cluster === true, client as unknown as Commands, prefix, shownUrl);
		store.beat();
		return store;
	}

	async get<T>(name: string): Promise<T | undefined> {
		const text = await this.command(() => this.commands.get(this.key(name)));
		return text === null ? undefined : (JSON.parse(text) as T);
	}

	async run<A, R>(step: RecordStep<A, R>, names: string[], args: A, nowMs: number): Promise<R> {
		const options = { keys: names.map((name) => this.key(name)), arguments: [String(nowMs), JSON.stringify(args ?? null)] };
		const answer = await this.command(async () => {
			try {
				return await this.commands.evalSha(scriptSha(step.lua), options);
			} catch (error) {
				// Not cached on that node yet (a restart, a failover, a node new to the cluster): sent whole, cached from then on.
				if (!(error instanceof Error && error.message.startsWith('NOSCRIPT'))) throw error;
				return this.commands.eval(step.lua, options);
			}
		});
		return (typeof answer === 'string' ? JSON.parse(answer) : undefined) as R;
	}

	/** A command on one key: on a cluster it goes to that key's node, as the records' steps do. */
	async ping(): Promise<void> {
		await this.command(() => this.commands.exists(this.key('ping')));
	}

	async alive(holder: string): Promise<boolean> {
		if (holder === this.holder) return true;
		return (await this.command(() => this.commands.exists(this.key(`alive:${holder}`)))) === 1;
	}

	async close(): Promise<void> {
		clearInterval(this.heartbeat);
		await this.client.close().catch(() => undefined);
	}

	private beat(): void {
		const once = () => void this.commands.set(this.key(`alive:${this.holder}`), '1', { PX: HEARTBEAT_TTL_MS }).catch(() => undefined);
		once();
		this.heartbeat = setInterval(once, HEARTBEAT_MS);
		this.heartbeat.unref();
	}

	private key(name: string): string {
		return `${this.prefix}${name}`;
	}

	/** One command, failed as StoreUnavailableError when Redis is away or does not answer in time. */
	private async command<R>(run: () => Promise<R>): Promise<R> {
		let timer: NodeJS.Timeout | undefined;
		try {
			return await Promise.race([
				run(),
				new Promise<never>((_, reject) => {
					timer = setTimeout(() => reject(new Error(`no answer within ${COMMAND_TIMEOUT_MS / 1000} s`)), COMMAND_TIMEOUT_MS);
				}),
			]);
		} catch (error) {
			throw new StoreUnavailableError(this.where, error);
		} finally {
			clearTimeout(timer);
		}
	}
}

/** The URL as it may be printed: a password in it is not. */
function withoutPassword(url: string): string {
	try {
		const parsed = new URL(url);
		if (parsed.password) parsed.password = '***';
		return parsed.toString().replace(/\/$/, '');
	} catch {
		return 'an invalid URL';
	}
}
