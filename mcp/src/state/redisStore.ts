import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { createClient } from '@redis/client';
import { KEEP_MS } from './records';
import type { StateStore } from './store';

/** A replica says it runs this often; one silent for HEARTBEAT_TTL_MS is taken as stopped. */
const HEARTBEAT_MS = 2_000;
const HEARTBEAT_TTL_MS = 6_000;
/** A document changed by another replica between our read and write is read again, up to this many times. */
const MAX_ATTEMPTS = 200;
/** Past this a command is taken as lost (Redis stopped mid-answer): the step fails, nothing is sent. */
const COMMAND_TIMEOUT_MS = 3_000;
/** A server that cannot reach Redis at its start stops after this, saying so. */
const CONNECT_WAIT_MS = 5_000;
/** After a failed step, how long an agent is told to wait: Redis reconnects within a second of its return. */
export const STORE_RETRY_SECONDS = 10;

/**
 * Compare and set, in one step on the server: the new value is written only if the document is
 * still what this replica read ('' for none), so a change is never lost to a concurrent one.
 */
const COMPARE_AND_SET = `
local current = redis.call('GET', KEYS[1])
if (current == false and ARGV[1] == '') or current == ARGV[1] then
	redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
	return 1
end
return 0`;

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

type Client = ReturnType<typeof createClient>;

/**
 * The records in Redis, shared by every replica on every machine that uses the same server and
 * prefix: each document one key holding its JSON, changed by compare-and-set (read, change, write
 * only if unchanged, else again), kept 24 h after its last change. Each replica keeps a heartbeat
 * key, so that a create whose sender stopped is told from one still being answered. Commands are
 * refused at once while Redis is unreachable (no offline queue): a call fails and says so rather
 * than hang past its client's budget.
 */
export class RedisStore implements StateStore {
	readonly where: string;
	readonly holder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
	private heartbeat: NodeJS.Timeout | undefined;

	private constructor(
		private readonly client: Client,
		private readonly prefix: string,
		shownUrl: string,
	) {
		this.where = `Redis at ${shownUrl}, prefix ${prefix}`;
	}

	/** Connects (failing when Redis is unreachable at start, so the server says so and stops). */
	static async open(url: string, say: (line: string) => void, prefix = 'omni-video-mcp:'): Promise<RedisStore> {
		const shownUrl = withoutPassword(url);
		let lastError = '';
		const client: Client = createClient({
			url,
			disableOfflineQueue: true,
			socket: { connectTimeout: 2_000, reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 1_000) },
		});
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
		const store = new RedisStore(client, prefix, shownUrl);
		store.beat();
		return store;
	}

	async transact<T extends object, R>(name: string, empty: () => T, change: (doc: T) => R): Promise<R> {
		const key = this.key(name);
		for (let attempt = 1; ; attempt++) {
			const before = await this.command(() => this.client.get(key));
			const doc = before === null ? empty() : (JSON.parse(before) as T);
			const answer = change(doc);
			const written = await this.command(() => this.client.eval(COMPARE_AND_SET, { keys: [key], arguments: [before ?? '', JSON.stringify(doc), String(KEEP_MS)] }));
			if (written === 1) return answer;
			if (attempt >= MAX_ATTEMPTS) throw new StoreUnavailableError(this.where, new Error(`${name} changed by other replicas ${attempt} times in a row`));
			// Another replica wrote in between: a short random pause spreads the next attempts.
			await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, attempt * 2)));
		}
	}

	async read<T extends object>(name: string, empty: () => T): Promise<T> {
		const text = await this.command(() => this.client.get(this.key(name)));
		return text === null ? empty() : (JSON.parse(text) as T);
	}

	async alive(holder: string): Promise<boolean> {
		if (holder === this.holder) return true;
		return (await this.command(() => this.client.exists(this.key(`alive:${holder}`)))) === 1;
	}

	async ping(): Promise<void> {
		await this.command(() => this.client.ping());
	}

	async close(): Promise<void> {
		clearInterval(this.heartbeat);
		await this.client.close().catch(() => undefined);
	}

	private beat(): void {
		const once = () => void this.client.set(this.key(`alive:${this.holder}`), '1', { PX: HEARTBEAT_TTL_MS }).catch(() => undefined);
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
