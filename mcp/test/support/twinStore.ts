import { createClient } from '@redis/client';
import { RedisStore } from '../../src/state/redisStore';
import type { RecordStep } from '../../src/state/recordStep';
import type { StateStore } from '../../src/state/store';
import { startRedis, type RedisServer } from './team';

const PREFIX = 'omni-video-mcp:';

/** What the twins read of Redis besides the store: a record's text and its time to live. */
interface Reader {
	get(key: string): Promise<string | null>;
	pTTL(key: string): Promise<number>;
	close(): Promise<void>;
}

/** A record as Redis holds it before or after a step: its JSON read back, and its time to live (-2: absent). */
interface Held {
	value: unknown;
	ttlMs: number;
}

/**
 * The records on Redis, where every step runs twice on the same records: as its Lua (what Redis
 * runs) and as its TypeScript (what memory and the records folder run), the TypeScript on the very
 * records the script was about to read. Any difference in answer, in what was written, or in how
 * long a record is kept fails the step with both sides shown. Steps run one at a time, so that the
 * records read before a script are the ones it read.
 */
export class TwinStore implements StateStore {
	readonly where = 'Redis, each step run as its Lua and its TypeScript and compared';
	/** The names of the steps run so far. */
	readonly ran = new Set<string>();
	private queue: Promise<unknown> = Promise.resolve();

	private constructor(
		private readonly redis: RedisStore,
		private readonly client: Reader,
		private readonly server: RedisServer,
	) {}

	static async start(): Promise<TwinStore> {
		const server = await startRedis();
		const client = createClient({ url: server.url });
		await client.connect();
		return new TwinStore(await RedisStore.open(server.url, () => undefined, {}, PREFIX), client, server);
	}

	get holder(): string {
		return this.redis.holder;
	}

	get<T>(name: string): Promise<T | undefined> {
		return this.redis.get<T>(name);
	}

	alive(holder: string): Promise<boolean> {
		return this.redis.alive(holder);
	}

	ping(): Promise<void> {
		return this.redis.ping();
	}

	run<A, R>(step: RecordStep<A, R>, names: string[], args: A, nowMs: number): Promise<R> {
		const ran = this.queue.then(() => this.compared(step, names, args, nowMs));
		this.queue = ran.catch(() => undefined);
		return ran;
	}

	async close(): Promise<void> {
		await this.redis.close();
		await this.client.close();
		await this.server.stop();
	}

	private async compared<A, R>(step: RecordStep<A, R>, names: string[], args: A, nowMs: number): Promise<R> {
		this.ran.add(step.name);
		const before = await this.held(names);
		const typescript = step.run(
			before.map((held) => structuredClone(held.value)),
			structuredClone(args),
			nowMs,
		);
		const startedMs = Date.now();
		const answer = await this.redis.run(step, names, args, nowMs);
		const after = await this.held(names);
		const elapsedMs = Date.now() - startedMs;
		const differences: string[] = [];
		if (!same(typescript.answer, answer)) differences.push(`answer: TypeScript ${show(typescript.answer)}, Lua ${show(answer)}`);
		typescript.writes.forEach((written, index) => {
			const name = names[index];
			const was = before[index];
			const now = after[index];
			if (written === undefined) {
				// Left alone: the same value, and its time to live only run down.
				if (!same(was.value, now.value) || now.ttlMs > was.ttlMs) differences.push(`${name}: TypeScript left it as ${show(was.value)}, Lua wrote ${show(now.value)} (kept ${now.ttlMs} ms, was ${was.ttlMs} ms)`);
				return;
			}
			if (written === null || written.expiresAtMs <= nowMs) {
				if (now.ttlMs !== -2) differences.push(`${name}: TypeScript removed it, Lua kept ${show(now.value)}`);
				return;
			}
			const keptMs = Math.floor(written.expiresAtMs - nowMs);
			if (!same(written.value, now.value)) differences.push(`${name}: TypeScript wrote ${show(written.value)}, Lua ${show(now.value)}`);
			else if (now.ttlMs > keptMs || now.ttlMs < keptMs - elapsedMs - 5) differences.push(`${name}: TypeScript keeps it ${keptMs} ms, Lua ${now.ttlMs} ms`);
		});
		if (differences.length > 0) throw new Error(`The step "${step.name}" differs between its TypeScript and its Lua, on ${show(before.map((held) => held.value))} with ${show(args)} at ${nowMs}:\n${differences.join('\n')}`);
		return answer;
	}

	private held(names: string[]): Promise<Held[]> {
		return Promise.all(
			names.map(async (name) => {
				const [text, ttlMs] = await Promise.all([this.client.get(PREFIX + name), this.client.pTTL(PREFIX + name)]);
				return { value: text === null ? undefined : (JSON.parse(text) as unknown), ttlMs: text === null ? -2 : ttlMs };
			}),
		);
	}
}

/**
 * Whether two answers or records are the same JSON, as both sides mean it: what JSON drops
 * (undefined) is absent, an empty list and an empty object are one (Lua's cjson writes both as {}),
 * and a number is what its first 14 significant digits say (all that Redis's cjson writes).
 */
function same(left: unknown, right: unknown): boolean {
	return JSON.stringify(canonical(left)) === JSON.stringify(canonical(right));
}

function canonical(value: unknown): unknown {
	const json = value === undefined ? undefined : (JSON.parse(JSON.stringify(value)) as unknown);
	const walk = (item: unknown): unknown => {
		if (typeof item === 'number') return Number(item.toPrecision(14));
		if (item === null || typeof item !== 'object') return item;
		if (Array.isArray(item)) return item.length === 0 ? '(empty)' : item.map(walk);
		const entries = Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
		return entries.length === 0 ? '(empty)' : Object.fromEntries(entries.map(([key, entry]) => [key, walk(entry)]));
	};
	return walk(json);
}

const show = (value: unknown) => (value === undefined ? 'nothing' : JSON.stringify(value));
