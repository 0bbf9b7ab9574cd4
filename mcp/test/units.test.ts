import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateGenerateInput } from '../../core';
import { ServerLedger } from '../src/ledger';
import { requestIdentity } from '../src/requestKey';
import { readSettings, SettingsError } from '../src/settings';
import { SpendGuard } from '../src/spendCap';
import { FileStore } from '../src/state/fileStore';
import { RedisStore } from '../src/state/redisStore';
import { defaultStateDir } from '../src/state/stateDir';
import { MemoryStore } from '../src/state/store';
import { Accounts } from '../src/signIn/accounts';
import { NotYoursError, ownJob } from '../src/ownJob';
import { DEFAULT_SIGN_IN_LIMITS } from '../src/signInLimits';

describe('how a retry is told from a new request (docs/mcp.md#retries-and-new-videos)', () => {
	const request = validateGenerateInput({ prompt: 'A heron', resolution: '1080p' });
	const windowMs = 10 * 60_000;
	let now = 1_000_000;
	const ledger = new ServerLedger(new MemoryStore(() => now), () => now);
	const identity = (options: { requestId?: string; newVideo?: boolean } = {}) =>
		requestIdentity('fp', request, { ...options, retryWindowMs: windowMs, read: (key) => ledger.read(key), nowMs: now });

	it('the same arguments are the same key within the window, the next key after it', async () => {
		const first = await identity();
		expect((await requestIdentity('fp', validateGenerateInput({ prompt: 'A heron', resolution: '1080P', duration: 8 }), { retryWindowMs: windowMs, read: async () => undefined, nowMs: now })).idempotencyKey).toBe(first.idempotencyKey);
		await ledger.note(first.idempotencyKey, { jobId: 'job_1' });
		now += windowMs - 1;
		expect((await identity()).idempotencyKey).toBe(first.idempotencyKey);
		now += 2;
		const later = await identity();
		expect(later.idempotencyKey).not.toBe(first.idempotencyKey);
		// The later request is itself retried within its own window.
		await ledger.note(later.idempotencyKey, { jobId: 'job_2' });
		now += 1_000;
		expect((await identity()).idempotencyKey).toBe(later.idempotencyKey);
	});

	it('another key, newVideo and a new requestId are new requests; the same requestId is not', async () => {
		const unnoted = (options: { requestId?: string; newVideo?: boolean } = {}) => requestIdentity('fp', request, { ...options, retryWindowMs: windowMs, read: async () => undefined, nowMs: now });
		const base = (await identity()).idempotencyKey;
		expect((await requestIdentity('other', request, { retryWindowMs: windowMs, read: async () => undefined, nowMs: now })).idempotencyKey).not.toBe(base);
		const a = await unnoted({ newVideo: true });
		const b = await unnoted({ newVideo: true });
		expect(a.idempotencyKey).not.toBe(b.idempotencyKey);
		expect(a.requestId).toMatch(/^new_/);
		expect((await unnoted({ requestId: 'x' })).idempotencyKey).toBe((await unnoted({ requestId: 'x' })).idempotencyKey);
		expect((await unnoted({ requestId: 'x' })).idempotencyKey).not.toBe((await unnoted({ requestId: 'y' })).idempotencyKey);
	});
});

describe('the spend cap', () => {
	const request = validateGenerateInput({ prompt: 'p', resolution: '720P', duration: 4 });
	const job = (id: string, status: 'queued' | 'done' | 'failed', credits: { creditsQueued?: number; creditsUsed?: number }) => ({ id, status, rawStatus: status, resultUrls: [], ...credits });

	// The cap's rules on every store: records.test.ts.
	it('two processes on one store hold against one cap: a hold in one refuses the create in the other', async () => {
		const dir = mkdtempSync(join(tmpdir(), 'omni-video-mcp-state-'));
		try {
			const say = () => undefined;
			const [a, b] = [new SpendGuard({ credits: 30, periodHours: 1 }, new FileStore(dir, say), Date.now), new SpendGuard({ credits: 30, periodHours: 1 }, new FileStore(dir, say), Date.now)];
			await a.observe('fp', job('job_1', 'queued', { creditsQueued: 20 }), request);
			await expect(b.reserve('fp', request)).rejects.toThrow(/20 are spent/);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});
});

describe('the records on disk (FileStore)', () => {
	let dir: string;
	beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'omni-video-mcp-state-'))));
	afterEach(() => rmSync(dir, { recursive: true, force: true }));

	const at = (ms: number) => () => ms;

	it('keep the ledger across a restart, the user\'s alone (0700 folders, 0600 files), for a day', async () => {
		const folder = join(dir, 'state');
		await new ServerLedger(new FileStore(folder, () => undefined, '', at(0)), at(0)).note('idem_a', { jobId: 'job_a' });
		expect(await new ServerLedger(new FileStore(folder, () => undefined, '', at(1)), at(1)).find('idem_a')).toEqual({ jobId: 'job_a' });
		expect(statSync(folder).mode & 0o777).toBe(0o700);
		expect(statSync(join(folder, 'records')).mode & 0o777).toBe(0o700);
		for (const file of readdirSync(join(folder, 'records'))) expect(statSync(join(folder, 'records', file)).mode & 0o777).toBe(0o600);
		// Records older than a day are not answered.
		expect(await new ServerLedger(new FileStore(folder, () => undefined, '', at(24 * 3_600_000)), at(24 * 3_600_000)).find('idem_a')).toBeUndefined();
	});

	it('set a damaged record aside with one line and go on', async () => {
		const lines: string[] = [];
		const ledger = new ServerLedger(new FileStore(dir, (line) => lines.push(line)), Date.now);
		await ledger.note('idem_a', { jobId: 'job_a' });
		const [file] = readdirSync(join(dir, 'records'));
		writeFileSync(join(dir, 'records', file), '{"value": {"entry');
		expect(await ledger.find('idem_a')).toBeUndefined();
		await ledger.note('idem_b', { jobId: 'job_b' });
		expect(lines).toEqual([expect.stringMatching(/could not be read .* kept as .*damaged/)]);
		expect(readdirSync(join(dir, 'records')).some((name) => name.startsWith(`${file}.damaged-`))).toBe(true);
		expect(await ledger.find('idem_b')).toEqual({ jobId: 'job_b' });
	});

	it('take over a lock left by a process that is gone, at once', async () => {
		// A pid that is not running: the lock's holder was killed while it held it.
		new FileStore(dir, () => undefined);
		writeFileSync(join(dir, 'records', 'create%3a%7bidem_c%7d.json.lock'), '999999999 1');
		const started = Date.now();
		await new ServerLedger(new FileStore(dir, () => undefined), Date.now).note('idem_c', { jobId: 'job_c' });
		expect(Date.now() - started).toBeLessThan(2_000);
	});

	it('claim a create for one of two stores at once', async () => {
		const ledgers = [new ServerLedger(new FileStore(dir, () => undefined), Date.now), new ServerLedger(new FileStore(dir, () => undefined), Date.now)];
		const claims = await Promise.all(ledgers.flatMap((ledger) => Array.from({ length: 5 }, () => ledger.claim('idem_d', { sentAtMs: 1 }))));
		expect(claims.filter((claim) => claim === undefined)).toHaveLength(1);
	});
});

describe('settings', () => {
	it('never takes the key from the command line, and refuses what it does not know', () => {
		expect(() => readSettings(['--api-key', 'secret'], {})).toThrow(/never from the command line/);
		expect(() => readSettings(['--api-key=secret'], {})).toThrow(SettingsError);
		expect(() => readSettings(['--colour'], {})).toThrow(/Unknown option --colour/);
		expect(() => readSettings([], { OMNI_VIDEO_PLAN: 'gold' })).toThrow(/pro or premium/);
		expect(() => readSettings(['--wait-seconds', '900'], {})).toThrow(/--wait-seconds must be a number from 0 to 600/);
	});

	it('defaults: stdio, loopback, 45 s, no base URL (each call says to set it)', () => {
		expect(readSettings([], {})).toMatchObject({ transport: 'stdio', host: '127.0.0.1', port: 3333, waitSeconds: 45, baseUrl: '', plan: 'pro', allowedDirs: [] });
		expect(readSettings(['--http', '--port', '0', '--allow-origin', 'https://a.example'], { OMNI_VIDEO_BASE_URL: 'https://api.example.com/api/v1/' })).toMatchObject({
			transport: 'http',
			port: 0,
			allowedOrigins: ['https://a.example'],
			baseUrl: 'https://api.example.com',
		});
		expect(readSettings([], { OMNI_VIDEO_BASE_URL: 'http://api.example.com' }).baseUrlProblem).toMatch(/https:\/\//);
	});

	it('keeps records in the platform\'s state folder unless moved or turned off', () => {
		expect(defaultStateDir({ XDG_STATE_HOME: '/x/state' }, 'linux', '/home/u')).toBe('/x/state/omni-video-mcp');
		expect(defaultStateDir({}, 'linux', '/home/u')).toBe('/home/u/.local/state/omni-video-mcp');
		expect(defaultStateDir({}, 'darwin', '/Users/u')).toBe('/Users/u/Library/Application Support/omni-video-mcp');
		expect(defaultStateDir({ LOCALAPPDATA: 'C:\\Users\\u\\AppData\\Local' }, 'win32', 'C:\\Users\\u')).toContain('omni-video-mcp');
		expect(readSettings([], { XDG_STATE_HOME: '/x/state' }).state).toEqual({ kind: 'dir', dir: expect.stringContaining('omni-video-mcp') });
		expect(readSettings(['--state-dir', 'none'], {}).state).toEqual({ kind: 'memory' });
		expect(readSettings([], { OMNI_VIDEO_MCP_STATE_DIR: '/tmp/ov' }).state).toEqual({ kind: 'dir', dir: '/tmp/ov' });
		expect(readSettings(['--state-file', '/tmp/a/state.json'], {}).state).toEqual({ kind: 'dir', dir: '/tmp/a', prefix: 'state.json.' });
	});

	it('--public-url is an http(s) address for an HTTP server only', () => {
		expect(readSettings(['--http', '--public-url', 'https://mcp.example.com/', '--sign-in', 'off'], {}).publicUrl).toBe('https://mcp.example.com');
		expect(readSettings(['--http'], { OMNI_VIDEO_MCP_PUBLIC_URL: 'https://mcp.example.com/team', OMNI_VIDEO_MCP_SIGN_IN: 'off' }).publicUrl).toBe('https://mcp.example.com/team');
		expect(readSettings(['--http'], {}).publicUrl).toBeUndefined();
		expect(() => readSettings(['--public-url', 'https://mcp.example.com'], {})).toThrow(/needs --http/);
		expect(() => readSettings(['--http', '--public-url', 'mcp.example.com'], {})).toThrow(/must be the https address/);
	});

	it('turns sign-in on with a public URL: own keys by default, team on request, off when asked; each needs what it stands on', () => {
		const secret = { OMNI_VIDEO_MCP_SECRET: 'x'.repeat(32) };
		expect(readSettings(['--http', '--public-url', 'https://mcp.example.com'], secret).signIn).toEqual({ way: 'own-key', secret: 'x'.repeat(32), accessTokenSeconds: 3600, limits: DEFAULT_SIGN_IN_LIMITS, trustProxy: false });
		expect(readSettings(['--http', '--public-url', 'https://mcp.example.com', '--sign-in', 'team'], { ...secret, OMNI_VIDEO_API_KEY: 'k' }).signIn?.way).toBe('team');
		expect(readSettings(['--http', '--public-url', 'https://mcp.example.com', '--sign-in', 'off'], {}).signIn).toBeUndefined();
		expect(readSettings(['--http'], secret).signIn).toBeUndefined();
		expect(() => readSettings(['--http', '--public-url', 'https://mcp.example.com'], {})).toThrow(/needs OMNI_VIDEO_MCP_SECRET, at least 32 characters.*openssl rand -base64 32.*--sign-in off/);
		expect(() => readSettings(['--http', '--public-url', 'https://mcp.example.com'], { OMNI_VIDEO_MCP_SECRET: 'short' })).toThrow(/at least 32/);
		expect(() => readSettings(['--http', '--public-url', 'https://mcp.example.com', '--sign-in', 'team'], secret)).toThrow(/team's key in OMNI_VIDEO_API_KEY/);
		expect(() => readSettings(['--http', '--public-url', 'https://mcp.example.com/team'], secret)).toThrow(/without a path/);
		expect(() => readSettings(['--http', '--public-url', 'http://mcp.example.com'], secret)).toThrow(/needs an https public URL/);
		expect(readSettings(['--http', '--public-url', 'http://127.0.0.1:8080'], secret).signIn?.way).toBe('own-key');
		expect(() => readSettings(['--http', '--sign-in', 'team'], secret)).toThrow(/--sign-in needs --public-url/);
		expect(() => readSettings(['--http', '--public-url', 'https://mcp.example.com', '--sign-in', 'maybe'], secret)).toThrow(/own-key, team or off/);
	});

	it('keeps records in Redis with --redis or OMNI_VIDEO_MCP_REDIS_URL, and refuses a folder beside it or a URL that is not Redis', () => {
		expect(readSettings(['--redis', 'redis://10.0.0.5:6379'], {}).state).toEqual({ kind: 'redis', url: 'redis://10.0.0.5:6379', cluster: false });
		expect(readSettings([], { OMNI_VIDEO_MCP_REDIS_URL: 'rediss://user:pw@cache.internal:6380/2' }).state).toEqual({ kind: 'redis', url: 'rediss://user:pw@cache.internal:6380/2', cluster: false });
		expect(readSettings(['--redis', 'redis://10.0.0.5:7000', '--redis-cluster'], {}).state).toEqual({ kind: 'redis', url: 'redis://10.0.0.5:7000', cluster: true });
		expect(readSettings([], { OMNI_VIDEO_MCP_REDIS_URL: 'redis://10.0.0.5:7000', OMNI_VIDEO_MCP_REDIS_CLUSTER: '1' }).state).toMatchObject({ cluster: true });
		expect(() => readSettings(['--redis', 'localhost:6379'], {})).toThrow(/must be a redis:\/\/ or rediss:\/\/ URL/);
		expect(() => readSettings(['--redis', 'redis://127.0.0.1:6379'], { OMNI_VIDEO_MCP_STATE_DIR: '/tmp/ov' })).toThrow(/leave out --state-dir/);
	});
});

describe('Redis records when Redis is not there (the rest with a real redis-server: mcp/test/team.test.ts)', () => {
	it('a server started against a Redis that does not answer stops within seconds and says where it looked', async () => {
		const lines: string[] = [];
		const startedAt = Date.now();
		await expect(RedisStore.open('redis://:secret@127.0.0.1:1', (line) => lines.push(line))).rejects.toThrow(/Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1 did not answer within 5 s: is it running/);
		expect(Date.now() - startedAt).toBeLessThan(8_000);
		// The password is never printed.
		expect(lines.join('\n')).not.toContain('secret');
	});
});

describe('ownJob: a team member reads only the jobs they made', () => {
	it('their own job passes; another member\'s, one nobody made, and one made under their name before they were added again are refused alike; no member, no check', async () => {
		const accounts = new Accounts(new MemoryStore());
		const context = { accounts };
		const ann = { signedIn: { accountId: 'member:ann' as const, member: { name: 'ann', since: 100 } } };
		await accounts.noteMemberJob({ name: 'ann', since: 100 }, 'job_ann');
		await accounts.noteMemberJob({ name: 'ben', since: 5 }, 'job_ben');
		await accounts.noteMemberJob({ name: 'ann', since: 50 }, 'job_old_ann');
		await expect(ownJob(context, ann, 'job_ann')).resolves.toBeUndefined();
		const refusals = await Promise.all(['job_ben', 'job_nobody', 'job_old_ann'].map((jobId) => ownJob(context, ann, jobId).then(() => 'let through', (error: unknown) => error)));
		for (const refusal of refusals) expect(refusal).toBeInstanceOf(NotYoursError);
		expect(new Set(refusals.map((refusal, i) => (refusal as Error).message.replace(['job_ben', 'job_nobody', 'job_old_ann'][i], 'JOB'))).size).toBe(1);
		// People with their own key, and bearer keys, are no members: the service keeps other keys' jobs from them.
		await expect(ownJob(context, { signedIn: { accountId: 'key:fp' } }, 'job_ben')).resolves.toBeUndefined();
		await expect(ownJob(context, {}, 'job_ben')).resolves.toBeUndefined();
	});
});
