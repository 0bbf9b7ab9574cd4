import { createHash } from 'node:crypto';

/** What a step writes to one of its records: a value kept until `expiresAtMs`, null to remove it, undefined to leave it. */
export type Written = { value: unknown; expiresAtMs: number } | null | undefined;

/**
 * One named atomic step on a few records, the same on every store: `run` for the stores in this
 * process (memory, files), `lua` for Redis, where it runs as one script and no other step comes in
 * between. Both read the records as they are (undefined: absent or expired) and write only those
 * they change. The Lua body runs after LUA_PRELUDE, with its records as KEYS, `now` the caller's
 * clock, `args` the step's arguments decoded, and returns `answer(value)`.
 */
export interface RecordStep<A, R> {
	/** What the step does, in a word or two: the name operators and metrics see. */
	readonly name: string;
	run(values: unknown[], args: A, nowMs: number): { writes: Written[]; answer: R };
	readonly lua: string;
}

/** Every step made by recordStep, by name: a name is a metric's label and a script's identity, so it is made once. */
const stepNames = new Set<string>();

export function recordStep<A, R>(name: string, run: RecordStep<A, R>['run'], luaBody: string): RecordStep<A, R> {
	if (stepNames.has(name)) throw new Error(`Two record steps are named "${name}"`);
	stepNames.add(name);
	return { name, run, lua: `${LUA_PRELUDE}\n${luaBody}` };
}

/** The names of the steps made so far (of the modules loaded): what a test of every step checks it ran. */
export function recordStepNames(): string[] {
	return [...stepNames];
}

/** Runs the step in this process, handing each write to the store. */
export function applyStep<A, R>(step: RecordStep<A, R>, values: unknown[], args: A, nowMs: number, write: (index: number, written: { value: unknown; expiresAtMs: number } | null) => void): R {
	const { writes, answer } = step.run(values, args, nowMs);
	writes.forEach((written, index) => {
		if (written === undefined) return;
		write(index, written === null || written.expiresAtMs <= nowMs ? null : { value: structuredClone(written.value), expiresAtMs: written.expiresAtMs });
	});
	return answer;
}

/** A script's SHA-1, as Redis names a cached script (EVALSHA). */
export function scriptSha(lua: string): string {
	return createHash('sha1').update(lua).digest('hex');
}

/**
 * What every step's script starts with. Lua's cjson writes an empty table as an object, so the
 * steps' JavaScript reads a list through `list()`.
 */
const LUA_PRELUDE = `
local now = tonumber(ARGV[1])
local args = cjson.decode(ARGV[2])
local function load(i)
	local text = redis.call('GET', KEYS[i])
	if not text then return nil end
	return cjson.decode(text)
end
local function save(i, value, expiresAtMs)
	local ttl = math.floor(expiresAtMs - now)
	if value == nil or ttl <= 0 then
		redis.call('DEL', KEYS[i])
	else
		redis.call('SET', KEYS[i], cjson.encode(value), 'PX', ttl)
	end
end
local function answer(value)
	if value == nil then return nil end
	return cjson.encode(value)
end`;

/** A list as a record holds it: Lua's cjson writes an empty one as {}. */
export function list<T>(value: unknown): T[] {
	return Array.isArray(value) ? (value as T[]) : [];
}
