import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateGenerateInput, type JobRecord } from '../../core';
import { jobRecordName, noteCallback, noteJobSeen, takeLooks, holdLooks, dropLooks, jobEntryFrom } from '../src/jobRecords';
import { ServerLedger } from '../src/ledger';
import { sharedPlanIn } from '../src/planRecords';
import { SpendCapError, SpendGuard } from '../src/spendCap';
import { CallCancels } from '../src/cancels';
import { FileStore } from '../src/state/fileStore';
import { RedisStore } from '../src/state/redisStore';
import { MemoryStore, type StateStore } from '../src/state/store';
import { Accounts } from '../src/signIn/accounts';
import { oauthAdapter, oauthRecordId, oauthRecordName, UNUSED_CLIENT_MS } from '../src/signIn/oauthRecords';
import { SignInThrottle } from '../src/signIn/signInThrottle';
import { KeySeal } from '../src/signIn/sealedKey';
import { REDIS_SERVER, startRedis, startRedisCluster, type RedisServer } from './support/team';
import { TwinStore } from './support/twinStore';
import { recordStepNames } from '../src/state/recordStep';

jest.setTimeout(60_000);

interface Opened {
	store: StateStore;
	close(): Promise<void>;
}

/**
 * Every named step on every store: the same answers and records from the JavaScript of memory and
 * the records folder and from the scripts of Redis and a Redis Cluster (whose empty lists come
 * back as {}), since processes and replicas rely on them alike. Redis and the cluster run with
 * the team's step of .ci/run (MCP_TEAM_TEST=1), which installs redis-server.
 */
const withRedis = process.env.MCP_TEAM_TEST === '1';
/** Wherever redis-server is installed, plain npm test runs every step as its Lua and as its TypeScript on the same records, and compares. */
const twins = existsSync(REDIS_SERVER) ? TwinStore.start() : undefined;
const stores: Array<[string, () => Promise<Opened>]> = [
	['memory', async () => ({ store: new MemoryStore(), close: async () => undefined })],
	[
		'a records folder',
		async () => {
			const dir = mkdtempSync(join(tmpdir(), 'omni-video-mcp-records-'));
			return { store: new FileStore(dir, () => undefined), close: async () => rmSync(dir, { recursive: true, force: true }) };
		},
	],
	...(twins ? ([['Redis, each step against its TypeScript twin', async () => ({ store: await twins, close: async () => undefined })]] as Array<[string, () => Promise<Opened>]>) : []),
	...(withRedis
		? ([
				['Redis with a password', () => onRedis(startRedis({ password: 'team-secret' }), false)],
				['a Redis Cluster of three', () => onRedis(startRedisCluster(), true)],
			] as Array<[string, () => Promise<Opened>]>)
		: []),
];

async function onRedis(starting: Promise<RedisServer>, cluster: boolean): Promise<Opened> {
	if (!existsSync(REDIS_SERVER)) throw new Error(`${REDIS_SERVER} is missing: apt-get install redis-server (.ci/run does)`);
	const redis = await starting;
	const store = await RedisStore.open(redis.url, () => undefined, { cluster });
	return {
		store,
		close: async () => {
			await store.close();
			await redis.stop();
		},
	};
}

const job = (id: string, status: JobRecord['status'], extra: Partial<JobRecord> = {}): JobRecord => ({ id, status, rawStatus: status, resultUrls: [], ...extra });

describe.each(stores)('each step on %s', (_name, open) => {
	let opened: Opened;
	beforeAll(async () => {
		opened = await open();
	});
	afterAll(async () => {
		await opened?.close();
	});
	const now = () => Date.now();

	it('the ledger: one claim wins, a note keeps its first time, a lost answer and a forgotten create', async () => {
		const { store } = opened;
		const ledger = new ServerLedger(store, now);
		const claims = await Promise.all(Array.from({ length: 6 }, () => ledger.claim('idem_a', { sentAtMs: Date.now() })));
		expect(claims.filter((claim) => claim === undefined)).toHaveLength(1);
		expect(await ledger.find('idem_a')).toMatchObject({ pending: true });
		const firstNoted = (await ledger.read('idem_a'))?.notedAtMs;
		await ledger.note('idem_a', { jobId: 'job_a' });
		expect(await ledger.find('idem_a')).toEqual({ jobId: 'job_a' });
		expect((await ledger.read('idem_a'))?.notedAtMs).toBe(firstNoted);
		expect(await ledger.claim('idem_a', { sentAtMs: 2 })).toEqual({ jobId: 'job_a' });
		const sentAtMs = Date.now();
		await ledger.claim('idem_b', { sentAtMs });
		expect(await ledger.claim('idem_b', { sentAtMs: sentAtMs + 1 })).toEqual({ sentAtMs, pending: true });
		await ledger.answerLost('idem_b');
		expect(await ledger.find('idem_b')).toEqual({ sentAtMs });
		await ledger.forget('idem_b');
		expect(await ledger.find('idem_b')).toBeUndefined();
	});

	it("a job's record: seen (an empty list stays a list), callbacks for it and not, one holder of its looks", async () => {
		const { store } = opened;
		const name = [jobRecordName('fp1', 'job_1')];
		expect(await store.run(noteCallback, name, { job: job('job_1', 'done'), verified: true }, now())).toBe(false);
		await store.run(noteJobSeen, name, { job: job('job_1', 'running'), createdAtMs: 1_000, expectedEndAtMs: 61_000 }, now());
		await store.run(noteJobSeen, name, { job: job('job_1', 'running'), createdAtMs: 5_000, expectedEndAtMs: 99_000 }, now());
		let entry = jobEntryFrom(await store.get(name[0]));
		expect(entry).toMatchObject({ createdAtMs: 1_000, expectedEndAtMs: 61_000, seen: { job: { id: 'job_1', status: 'running', resultUrls: [] } } });
		expect(await store.run(takeLooks, name, { me: 'a', untilMs: now() + 10_000 }, now())).toBe(true);
		expect(await store.run(takeLooks, name, { me: 'b', untilMs: now() + 10_000 }, now())).toBe(false);
		expect(await store.run(takeLooks, name, { me: 'b', untilMs: now() + 10_000, gone: 'a' }, now())).toBe(true);
		await store.run(holdLooks, name, { me: 'a', untilMs: now() + 50_000, nextLookAtMs: now() + 40_000 }, now());
		expect(jobEntryFrom(await store.get(name[0]))?.looker?.by).toBe('b');
		await store.run(holdLooks, name, { me: 'b', untilMs: now() + 50_000, nextLookAtMs: 123 }, now());
		expect(jobEntryFrom(await store.get(name[0]))?.looker).toMatchObject({ by: 'b', nextLookAtMs: 123 });
		await store.run(dropLooks, name, { me: 'b' }, now());
		expect(jobEntryFrom(await store.get(name[0]))?.looker).toBeUndefined();
		expect(await store.run(noteCallback, name, { job: job('job_1', 'done', { resultUrls: ['https://cdn.example/v.mp4'] }), verified: false }, now())).toBe(true);
		expect(jobEntryFrom(await store.get(name[0]))?.seen?.job.status).toBe('running');
		await store.run(noteCallback, name, { job: job('job_1', 'done', { resultUrls: ['https://cdn.example/v.mp4'] }), verified: true }, now());
		entry = jobEntryFrom(await store.get(name[0]));
		expect(entry?.seen?.job).toMatchObject({ status: 'done', resultUrls: ['https://cdn.example/v.mp4'] });
		expect(entry?.callbackAtMs).toEqual(expect.any(Number));
	});

	it("a key's plan: its request windows, its places, bound, released and freed by a job's end", async () => {
		const plan = sharedPlanIn(opened.store, 'fp2');
		const room = { perMinute: 2, perHour: 3, marginMs: 0 };
		const at = Date.now();
		expect(await plan.claimRequest(at, room)).toEqual({ granted: true, sentAtMs: [at] });
		expect((await plan.claimRequest(at + 1, room)).granted).toBe(true);
		expect(await plan.claimRequest(at + 2, room)).toEqual({ granted: false, sentAtMs: [at, at + 1] });
		expect((await plan.claimRequest(at + 61_000, room)).granted).toBe(true);
		expect((await plan.claimRequest(at + 122_000, room)).granted).toBe(false);
		expect(await plan.claimPlace('p1', at, 2, at + 60_000)).toEqual({ granted: true, othersFreeAtMs: [] });
		expect(await plan.claimPlace('p2', at, 2, at + 70_000)).toEqual({ granted: true, othersFreeAtMs: [at + 60_000] });
		expect((await plan.claimPlace('p3', at, 2, at + 80_000)).granted).toBe(false);
		await plan.bindPlace('p1', 'job_x', at + 30_000, at + 600_000);
		await plan.releasePlace('p2');
		expect(await plan.claimPlace('p3', at, 2, at + 80_000)).toEqual({ granted: true, othersFreeAtMs: [at + 30_000] });
		await plan.jobEnded('job_x');
		expect(await plan.claimPlace('p4', at, 2, at + 80_000)).toEqual({ granted: true, othersFreeAtMs: [at + 80_000] });
		// A place outlives none of its lapses.
		expect((await plan.claimPlace('p5', at + 90_000, 2, at + 150_000)).granted).toBe(true);
	});

	it("a key's spend: a hold at a time while the price is unknown, then the cap by what was spent", async () => {
		let clock = Date.now();
		const guard = new SpendGuard({ credits: 50, periodHours: 1 }, opened.store, () => clock);
		const request = validateGenerateInput({ prompt: 'p', resolution: '720P', duration: 4 });
		const first = await guard.reserve('fp3', request);
		await expect(guard.reserve('fp3', request)).rejects.toThrow(SpendCapError);
		await guard.observe('fp3', job('job_s1', 'queued', { creditsQueued: 20 }), request);
		await first.release();
		await (await guard.reserve('fp3', request)).release();
		await guard.observe('fp3', job('job_s2', 'queued', { creditsQueued: 20 }), request);
		await expect(guard.reserve('fp3', request)).rejects.toThrow(/spend cap is 50 credits per 1 h, 40 are spent/);
		// A job seen again is counted once, at what it was last reported.
		await guard.observe('fp3', job('job_s2', 'failed', { creditsUsed: 0 }));
		await guard.observe('fp3', job('job_s2', 'failed', { creditsUsed: 0 }));
		await (await guard.reserve('fp3', request)).release();
		await guard.observe('fp3', job('job_s3', 'queued', { creditsQueued: 20 }), request);
		await expect(guard.reserve('fp3', request)).rejects.toThrow(/40 are spent/);
		// Past the period (and its last sixtieth, counted whole while it overlaps), nothing counts.
		clock += 3_600_000 + 60_000;
		await guard.observe('fp3', job('job_s4', 'done', { creditsQueued: 20, creditsUsed: 20 }), request);
		await (await guard.reserve('fp3', request)).release();
	});

	it("sign-in's records at rest: a token, code or session kept by its hash, found by itself; an app forgotten after a day until its first grant", async () => {
		const { store } = opened;
		const adapter = oauthAdapter(store, now);
		const tokens = adapter('AccessToken');
		const secret = `tok_${Math.random().toString(36).slice(2)}`;
		await tokens.upsert(secret, { jti: secret, grantId: 'grant_h', accountId: 'key:fp', kind: 'AccessToken' }, 3600);
		// Not under its own name, and nowhere in what is kept under its hash.
		expect(await store.get(oauthRecordName('AccessToken', secret))).toBeUndefined();
		const kept = await store.get<{ payload: string }>(oauthRecordName('AccessToken', oauthRecordId('AccessToken', secret)));
		expect(JSON.stringify(kept)).not.toContain(secret);
		expect(await tokens.find(secret)).toMatchObject({ jti: secret, grantId: 'grant_h' });
		await tokens.consume(secret);
		expect(await tokens.find(secret)).toMatchObject({ consumed: expect.any(Number) });
		await tokens.revokeByGrantId('grant_h');
		expect(await tokens.find(secret)).toBeUndefined();
		// A session: by its hash; found by its uid (its cookie nowhere), and an interaction keeps no cookie.
		const cookie = `ses_${Math.random().toString(36).slice(2)}`;
		await adapter('Session').upsert(cookie, { jti: cookie, uid: 'uid_h', accountId: 'key:fp' }, 3600);
		expect(await adapter('Session').find(cookie)).toMatchObject({ jti: cookie, accountId: 'key:fp' });
		expect(await adapter('Session').findByUid('uid_h')).toMatchObject({ accountId: 'key:fp' });
		expect(JSON.stringify(await store.get('oauth:{oauth}:session-uid:uid_h'))).not.toContain(cookie);
		await adapter('Interaction').upsert('int_h', { jti: 'int_h', session: { uid: 'uid_h', cookie, accountId: 'key:fp' } }, 600);
		expect(JSON.stringify(await store.get(oauthRecordName('Interaction', 'int_h')))).not.toContain(cookie);
		expect(await adapter('Interaction').find('int_h')).toMatchObject({ session: { uid: 'uid_h', accountId: 'key:fp' } });

		// An app registered and never used is kept a day; its first grant keeps it as long as any.
		const clients = adapter('Client');
		await clients.upsert('app_h', { client_id: 'app_h', redirect_uris: ['https://app.example/cb'] });
		const until = async () => (await store.get<{ expiresAtMs: number }>(oauthRecordName('Client', 'app_h')))?.expiresAtMs ?? 0;
		expect(await until()).toBeLessThanOrEqual(Date.now() + UNUSED_CLIENT_MS);
		expect(await until()).toBeGreaterThan(Date.now() + UNUSED_CLIENT_MS - 60_000);
		await adapter('Grant').upsert('grant_app_h', { jti: 'grant_app_h', clientId: 'app_h', accountId: 'key:fp' }, 3600);
		expect(await until()).toBeGreaterThan(Date.now() + 300 * UNUSED_CLIENT_MS);
		await adapter('Grant').upsert('grant_app_h2', { jti: 'grant_app_h2', clientId: 'app_h', accountId: 'key:fp' }, 3600);
		expect(await until()).toBeGreaterThan(Date.now() + 300 * UNUSED_CLIENT_MS);
	});

	it("sign-in's records written and revoked in one step each: a token with its grant's index, a session with its uid record, a grant with its client; a grant revoked whole, a token written meanwhile too", async () => {
		const { store } = opened;
		// The steps the adapter runs, and a write of another replica's made while the adapter reads (once, when set).
		const runs: string[][] = [];
		let meanwhile: (() => Promise<void>) | undefined;
		const measured: StateStore = {
			where: store.where,
			holder: store.holder,
			async get<T>(name: string): Promise<T | undefined> {
				const value = await store.get<T>(name);
				const write = meanwhile;
				meanwhile = undefined;
				await write?.();
				return value;
			},
			run(step, names, args, nowMs) {
				runs.push([step.name, ...names]);
				return store.run(step, names, args, nowMs);
			},
			alive: (holder) => store.alive(holder),
			ping: () => store.ping(),
		};
		const adapter = oauthAdapter(measured, now);
		const another = oauthAdapter(store, now);
		const stepsOf = async (write: () => Promise<unknown>) => {
			runs.length = 0;
			await write();
			return [...runs];
		};
		const index = 'oauth:{oauth}:grant-index:grant_one';
		const name = (model: string, id: string) => oauthRecordName(model, oauthRecordId(model, id));
		const indexed = async () => (await store.get<{ names: string[]; expiresAtMs: number }>(index)) ?? { names: [], expiresAtMs: 0 };

		// A token with a grant: the record and the grant's index, one step; the index kept as long as the longest.
		expect(await stepsOf(() => adapter('AccessToken').upsert('tok_one', { grantId: 'grant_one', accountId: 'key:fp' }, 3600))).toEqual([['keep oauth record', name('AccessToken', 'tok_one'), index]]);
		expect(await stepsOf(() => adapter('AuthorizationCode').upsert('code_one', { grantId: 'grant_one', accountId: 'key:fp' }, 60))).toHaveLength(1);
		expect(await stepsOf(() => adapter('RefreshToken').upsert('ref_one', { grantId: 'grant_one', accountId: 'key:fp' }, 14 * 86_400))).toHaveLength(1);
		await adapter('AuthorizationCode').upsert('code_one', { grantId: 'grant_one', accountId: 'key:fp' }, 60);
		expect((await indexed()).names.sort()).toEqual([name('AccessToken', 'tok_one'), name('AuthorizationCode', 'code_one'), name('RefreshToken', 'ref_one')].sort());
		expect((await indexed()).expiresAtMs).toBeGreaterThan(Date.now() + 13 * 86_400_000);
		expect(await adapter('AccessToken').find('tok_one')).toMatchObject({ grantId: 'grant_one' });
		// A token without a grant: its record alone.
		expect(await stepsOf(() => adapter('ClientCredentials').upsert('cc_one', { accountId: 'key:fp' }, 600))).toEqual([['keep oauth record', name('ClientCredentials', 'cc_one')]]);

		// A session: its record and its uid record, one step.
		expect(await stepsOf(() => adapter('Session').upsert('ses_one', { uid: 'uid_one', accountId: 'key:fp' }, 3600))).toEqual([['keep oauth record', name('Session', 'ses_one'), 'oauth:{oauth}:session-uid:uid_one']]);
		expect(await adapter('Session').findByUid('uid_one')).toMatchObject({ accountId: 'key:fp' });

		// A grant: its record and its client's, kept from then on as long as any, one step; an unknown client is not made.
		await adapter('Client').upsert('app_one', { client_id: 'app_one', redirect_uris: ['https://app.example/cb'] });
		const clientUntil = async (id: string) => (await store.get<{ expiresAtMs: number }>(oauthRecordName('Client', id)))?.expiresAtMs;
		expect(await clientUntil('app_one')).toBeLessThanOrEqual(Date.now() + UNUSED_CLIENT_MS);
		expect(await stepsOf(() => adapter('Grant').upsert('grant_one', { jti: 'grant_one', clientId: 'app_one', accountId: 'key:fp' }, 3600))).toEqual([['keep oauth record', oauthRecordName('Grant', 'grant_one'), oauthRecordName('Client', 'app_one')]]);
		expect(await clientUntil('app_one')).toBeGreaterThan(Date.now() + 300 * UNUSED_CLIENT_MS);
		expect(await stepsOf(() => adapter('Grant').upsert('grant_lost', { jti: 'grant_lost', clientId: 'app_none', accountId: 'key:fp' }, 3600))).toHaveLength(1);
		expect(await clientUntil('app_none')).toBeUndefined();

		// Revoked: the index read, then one step removes it with all it named; a refresh token another
		// replica wrote between the read and that step is answered, and removed by one more.
		await another('AccessToken').upsert('tok_other', { grantId: 'grant_two', accountId: 'key:fp' }, 3600);
		meanwhile = () => another('RefreshToken').upsert('ref_late', { grantId: 'grant_one', accountId: 'key:fp' }, 3600);
		const revoking = await stepsOf(() => adapter('RefreshToken').revokeByGrantId('grant_one'));
		expect(revoking.map(([step, ...names]) => [step, names.length])).toEqual([['revoke oauth grant', 4], ['revoke oauth grant', 2]]);
		expect(revoking[1]).toEqual(['revoke oauth grant', index, name('RefreshToken', 'ref_late')]);
		for (const [model, id] of [['AccessToken', 'tok_one'], ['AuthorizationCode', 'code_one'], ['RefreshToken', 'ref_one'], ['RefreshToken', 'ref_late']]) expect(await adapter(model).find(id)).toBeUndefined();
		expect(await store.get(index)).toBeUndefined();
		expect(await adapter('AccessToken').find('tok_other')).toMatchObject({ grantId: 'grant_two' });
		// A grant with nothing left: one step, which removes nothing else.
		expect(await stepsOf(() => adapter('AccessToken').revokeByGrantId('grant_one'))).toEqual([['revoke oauth grant', index]]);
		expect(await adapter('Grant').find('grant_one')).toMatchObject({ clientId: 'app_one' });
	});

	it("sign-in's throttle: wrong tries lock a name and an address for a growing time; key checks and registrations bounded per window, exactly, under a race", async () => {
		const { store } = opened;
		let offset = 0;
		const clock = () => Date.now() + offset;
		const limits = { failures: 2, lockMs: 1_000, maxLockMs: 3_000, windowMs: 60_000, keyChecks: 3, keyChecksInAll: 5, registrations: 2 };
		const throttle = new SignInThrottle(store, limits, clock);
		const who = `m${Math.random().toString(36).slice(2)}`;
		const address = `198.51.100.${Math.floor(Math.random() * 200)}`;
		expect(await throttle.locked(address, who)).toBeUndefined();
		// Two free wrong tries, then 1 s, 2 s, then the cap of 3 s.
		expect(await throttle.failed(address, who)).toBeUndefined();
		expect(await throttle.failed(address, who)).toBeUndefined();
		const locks: number[] = [];
		for (let i = 0; i < 3; i++) {
			const held = await throttle.failed(address, who);
			expect(held?.reason).toBe('member_locked');
			locks.push((held?.untilMs ?? 0) - clock());
		}
		expect(locks.map((ms) => Math.round(ms / 1000))).toEqual([1, 2, 3]);
		expect(await throttle.locked(address, who)).toMatchObject({ reason: 'member_locked' });
		// Another name from the same address is not locked (an address gets four times as many tries).
		expect(await throttle.locked(address, `${who}x`)).toBeUndefined();
		offset += 3_100;
		expect(await throttle.locked(address, who)).toBeUndefined();
		await throttle.succeeded(who);
		expect(await throttle.failed(address, who)).toBeUndefined();
		// The address: locked after four times the free tries, whatever the names.
		for (let i = 0; i < 2; i++) await throttle.failed(address, `${who}-${i}`);
		const addressLock = await throttle.failed(address);
		expect(addressLock?.reason).toBe('address_locked');
		expect(await throttle.locked(address)).toMatchObject({ reason: 'address_locked' });

		// Key checks: three for this address in the window, raced; then the window's end frees them.
		const other = `203.0.113.${Math.floor(Math.random() * 200)}`;
		const raced = await Promise.all(Array.from({ length: 6 }, () => throttle.takeKeyCheck(other)));
		expect(raced.filter((held) => held === undefined)).toHaveLength(3);
		expect(raced.find((held) => held !== undefined)).toMatchObject({ reason: 'key_checks_address' });
		// And five in all: two more from a third address, then everyone waits.
		const third = `192.0.2.${Math.floor(Math.random() * 200)}`;
		const before = await Promise.all(Array.from({ length: 3 }, () => throttle.takeKeyCheck(third)));
		expect(before.filter((held) => held?.reason === 'key_checks_all').length).toBeGreaterThanOrEqual(1);
		expect(await throttle.takeRegistration(other)).toBeUndefined();
		expect(await throttle.takeRegistration(other)).toBeUndefined();
		expect(await throttle.takeRegistration(other)).toMatchObject({ reason: 'registrations_address' });
		expect(await throttle.takeRegistration(third)).toBeUndefined();
	});

	it('a cap set or lowered after spending holds at once: every job counted, capped or not; at or over it nothing goes, whatever the price', async () => {
		let clock = Date.now();
		const request = validateGenerateInput({ prompt: 'p', resolution: '720P', duration: 4 });
		const uhd = validateGenerateInput({ prompt: 'p', resolution: '4K', duration: 10 });
		// No cap on the key nor on the member while they spend 20 credits.
		const uncapped = new SpendGuard(undefined, opened.store, () => clock);
		await (await uncapped.reserve('fp5', request, { name: 'cy' })).release();
		await uncapped.observe('fp5', job('job_c1', 'queued', { creditsQueued: 20 }), request);
		await uncapped.observeMade({ name: 'cy' }, job('job_c1', 'queued', { creditsQueued: 20 }), request);
		// The admin caps the member at 5: refused, a 4K of 10 s whose price nobody learned too.
		const capped = new SpendGuard(undefined, opened.store, () => clock);
		await expect(capped.reserve('fp5', request, { name: 'cy', cap: { credits: 5, periodHours: 24 } })).rejects.toThrow(/your own cap as a member of the team is 5 credits per 24 h, 20 are spent/);
		await expect(capped.reserve('fp5', uhd, { name: 'cy', cap: { credits: 5, periodHours: 24 } })).rejects.toThrow(SpendCapError);
		// A cap of another period counts the same jobs (a slice written for 24 h is counted whole).
		await expect(capped.reserve('fp5', uhd, { name: 'cy', cap: { credits: 20, periodHours: 1 } })).rejects.toThrow(/20 credits per 1 h, 20 are spent/);
		// The key's own cap, set after the same spending: refused as well, at 20 of 20 with no price known.
		await expect(new SpendGuard({ credits: 20, periodHours: 24 }, opened.store, () => clock).reserve('fp5', uhd)).rejects.toThrow(/your spend cap is 20 credits per 24 h, 20 are spent/);
		await (await new SpendGuard({ credits: 41, periodHours: 24 }, opened.store, () => clock).reserve('fp5', request)).release();
		// A job whose credits change later moves in the slice it was first counted in.
		await new SpendGuard({ credits: 30, periodHours: 1 }, opened.store, () => clock).observe('fp5', job('job_c1', 'failed', { creditsUsed: 0 }));
		await (await new SpendGuard({ credits: 5, periodHours: 24 }, opened.store, () => clock).reserve('fp5', uhd)).release();
		// Past the period, what was spent no longer counts.
		clock += 25 * 3_600_000;
		await (await capped.reserve('fp5', request, { name: 'cy', cap: { credits: 20, periodHours: 24 } })).release();
	});

	it("a call's cancellation, heard by another process", async () => {
		const cancels = new CallCancels(opened.store, now);
		const followed = cancels.follow('fp4|session|7');
		await new CallCancels(opened.store, now).cancel('fp4|session|7');
		await new Promise<void>((resolve) => followed.signal.addEventListener('abort', () => resolve()));
		followed.end();
	});

	it("sign-in's records: an app's, a code used once, a grant's tokens revoked together, a sealed key, members", async () => {
		const { store } = opened;
		const adapter = oauthAdapter(store, now);
		const clients = adapter('Client');
		await clients.upsert('app_1', { client_id: 'app_1', redirect_uris: ['https://app.example/cb'], post_logout_redirect_uris: [] });
		expect(await clients.find('app_1')).toEqual({ client_id: 'app_1', redirect_uris: ['https://app.example/cb'], post_logout_redirect_uris: [] });
		const codes = adapter('AuthorizationCode');
		const tokens = adapter('AccessToken');
		await codes.upsert('code_1', { grantId: 'grant_1', accountId: 'key:fp' }, 60);
		await tokens.upsert('token_1', { grantId: 'grant_1', accountId: 'key:fp' }, 3600);
		await tokens.upsert('token_2', { grantId: 'grant_2', accountId: 'key:fp' }, 3600);
		await Promise.all([codes.consume('code_1'), codes.consume('code_1')]);
		expect(await codes.find('code_1')).toMatchObject({ consumed: expect.any(Number) });
		await tokens.revokeByGrantId('grant_1');
		expect(await tokens.find('token_1')).toBeUndefined();
		expect(await codes.find('code_1')).toBeUndefined();
		expect(await tokens.find('token_2')).toMatchObject({ grantId: 'grant_2' });
		await adapter('Session').upsert('session_1', { uid: 'uid_1', accountId: 'key:fp' }, 3600);
		expect(await adapter('Session').findByUid('uid_1')).toMatchObject({ accountId: 'key:fp' });

		const accounts = new Accounts(store, now);
		const seal = new KeySeal('a secret of the test, thirty-two characters or more');
		await accounts.keepKey('fp_1', 'omni_key_1', 'premium', seal);
		expect(await accounts.keyOf('fp_1', seal)).toEqual({ apiKey: 'omni_key_1', plan: 'premium' });
		expect(await accounts.keyOf('fp_1', new KeySeal('another secret, thirty-two characters or more'))).toBeUndefined();
		const codesGiven = await Promise.all([accounts.addMember('ann'), accounts.addMember('ann')]);
		expect(codesGiven.filter(Boolean)).toHaveLength(1);
		const code = String(codesGiven.find(Boolean));
		expect(await accounts.addMember('ben', { credits: 50, periodHours: 24 })).toMatch(/^ovm_/);
		expect(await accounts.memberSigningIn('ann', code)).toMatchObject({ name: 'ann' });
		expect(await accounts.memberSigningIn('ann', 'ovm_wrong')).toBeUndefined();
		expect(await accounts.capMember('ann', { credits: 10, periodHours: 1 })).toBe(true);
		expect(await accounts.capMember('ben', undefined)).toBe(true);
		expect(await accounts.capMember('nobody', undefined)).toBe(false);
		await accounts.noteMemberJob({ name: 'ann' }, 'job_1');
		await accounts.noteMemberJob({ name: 'ann' }, 'job_1');
		await accounts.noteMemberJob({ name: 'ann' }, 'job_2');
		const listed = await accounts.members();
		expect(listed.map(({ member }) => member.name).sort()).toEqual(['ann', 'ben']);
		const ann = listed.find(({ member }) => member.name === 'ann');
		expect(ann?.member.cap).toEqual({ credits: 10, periodHours: 1 });
		expect(ann?.jobs).toEqual({ count: 2, latest: [expect.objectContaining({ jobId: 'job_2' }), expect.objectContaining({ jobId: 'job_1' })] });
		expect(listed.find(({ member }) => member.name === 'ben')?.member.cap ?? undefined).toBeUndefined();
		// Who made each job: the first member to note it, as of their membership; one read whether the job exists or not.
		expect(await accounts.jobMaker('job_1')).toEqual({ member: 'ann', since: 0 });
		await accounts.noteMemberJob({ name: 'ben', since: 7 }, 'job_1');
		expect(await accounts.jobMaker('job_1')).toEqual({ member: 'ann', since: 0 });
		expect(await accounts.jobMaker('job_none')).toBeUndefined();
		expect(await accounts.memberJobs('ann')).toEqual({ count: 2, latest: [expect.objectContaining({ jobId: 'job_2' }), expect.objectContaining({ jobId: 'job_1' })] });
		expect(await accounts.memberJobs('nobody')).toBeUndefined();
		// A sign-in noted on the member's record: the latest, and each app once (latest first); a cap keeps them.
		await accounts.noteMemberSignIn('ann', { clientId: 'app_a', name: 'Claude' });
		await accounts.noteMemberSignIn('ann', { clientId: 'app_b', name: 'ChatGPT' });
		await accounts.noteMemberSignIn('ann', { clientId: 'app_a', name: 'Claude' });
		await accounts.noteMemberSignIn('nobody', { clientId: 'app_a', name: 'Claude' });
		expect(await accounts.member('nobody')).toBeUndefined();
		expect(await accounts.capMember('ann', { credits: 5, periodHours: 24 })).toBe(true);
		const signedIn = await accounts.member('ann');
		expect(signedIn).toMatchObject({ apps: [{ clientId: 'app_a', app: 'Claude', atMs: expect.any(Number) }, expect.anything()], cap: { credits: 5 } });
		expect(signedIn?.apps?.map((app) => app.clientId)).toEqual(['app_a', 'app_b']);
		expect(await accounts.removeMember('ann')).toBe(true);
		expect(await accounts.removeMember('ann')).toBe(false);
		expect(await accounts.member('ann')).toBeUndefined();
		expect((await accounts.members()).map(({ member }) => member.name)).toEqual(['ben']);
	});
});

/**
 * Generated sequences on the twins: each step family driven through its own API by a seeded
 * random walk over a few records, with the clock jumping past windows, holds and looks, answers
 * lost, holds released twice and caps full, so that every branch of each step meets the same
 * records as its Lua and its TypeScript. Then every step the server's modules make must have run.
 */
(twins ? describe : describe.skip)('every step, its Lua against its TypeScript, on generated sequences', () => {
	let store: TwinStore;
	beforeAll(async () => {
		store = (await twins) as TwinStore;
	});
	afterAll(async () => {
		await store?.close();
	});

	/** mulberry32: a small seeded generator, so that a failing sequence is the same on every run. */
	const generator = (seed: number) => () => {
		seed = (seed + 0x6d2b79f5) | 0;
		let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
		t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
		return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
	};
	const STEPS = 400;

	it.each([1, 2, 3])('seed %i: ledger, job records, plan, spend, cancels', async (seed) => {
		const random = generator(seed);
		const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
		let clock = Date.now();
		const now = () => clock;
		const ledger = new ServerLedger(store, now);
		const plan = sharedPlanIn(store, `fz${seed}`, now);
		const guard = new SpendGuard({ credits: pick([0, 20, 60, 200]), periodHours: pick([1, 24]) }, store, now);
		const cancels = new CallCancels(store, now);
		const holds: Array<{ release(): Promise<void> }> = [];
		const idems = ['i1', 'i2', 'i3'].map((id) => `${id}-${seed}`);
		const jobs = ['j1', 'j2', 'j3'];
		const statuses: JobRecord['status'][] = ['queued', 'running', 'done', 'failed'];
		const request = () => validateGenerateInput({ prompt: 'p', resolution: pick(['720P', '1080P', '4K']), duration: pick([4, 6, 10]) });
		for (let i = 0; i < STEPS; i++) {
			// Mostly small steps of time, sometimes past a minute, an hour, two.
			clock += pick([0, 10, 500, 5_000, 61_000, 3_600_000, 7_300_000]);
			const idem = pick(idems);
			const jobId = pick(jobs);
			const name = [jobRecordName(`fz${seed}`, jobId)];
			const at = clock + pick([-120_000, -1, 0, 1, 30_000]);
			switch (Math.floor(random() * 16)) {
				case 0: await ledger.claim(idem, { sentAtMs: clock - pick([0, 200_000]) }); break;
				case 1: await ledger.note(idem, pick([{ jobId }, { sentAtMs: clock }])); break;
				case 2: await ledger.answerLost(idem); break;
				case 3: await ledger.forget(idem); break;
				case 4: await store.run(noteJobSeen, name, { job: job(jobId, pick(statuses), { progress: pick([undefined, 40]) }), ...pick([{}, { createdAtMs: at, expectedEndAtMs: at + 60_000 }]) }, clock); break;
				case 5: await store.run(noteCallback, name, { job: job(jobId, pick(statuses), { resultUrls: pick([[], ['https://cdn.example/v.mp4']]) }), verified: random() < 0.5 }, clock); break;
				case 6: await store.run(takeLooks, name, { me: pick(['a', 'b']), untilMs: at, ...pick([{}, { gone: pick(['a', 'b']) }]) }, clock); break;
				case 7: await store.run(holdLooks, name, { me: pick(['a', 'b']), untilMs: at + 10_000, nextLookAtMs: at }, clock); break;
				case 8: await store.run(dropLooks, name, { me: pick(['a', 'b']) }, clock); break;
				case 9: await plan.claimRequest(at, { perMinute: pick([1, 2, 10]), perHour: pick([2, 5, 100]), marginMs: pick([0, 1_000]) }); break;
				case 10: await plan.claimPlace(pick(['p1', 'p2', 'p3']), at, pick([1, 2]), at + pick([-1, 60_000])); break;
				case 11: await plan.bindPlace(pick(['p1', 'p2', 'p3']), jobId, at + 30_000, at + pick([-1, 600_000])); break;
				case 12: await (random() < 0.5 ? plan.releasePlace(pick(['p1', 'p2', 'p3'])) : plan.jobEnded(jobId)); break;
				case 13: {
					// A hold released once, twice, or left to lapse.
					const held = await guard.reserve(`fz${seed}`, request()).catch((error: unknown) => (error instanceof SpendCapError ? undefined : Promise.reject(error)));
					if (held) holds.push(held);
					break;
				}
				case 14: if (holds.length > 0) await (random() < 0.7 ? pick(holds) : holds.splice(0, 1)[0]).release(); break;
				default: await (random() < 0.8
					? guard.observe(`fz${seed}`, job(jobId, pick(statuses), pick([{ creditsQueued: pick([10, 20]) }, { creditsUsed: pick([0, 20]) }, {}])), pick([request(), undefined]))
					: cancels.cancel(`fz${seed}|s|${i}`));
			}
		}
	});

	it.each([1, 2, 3])('seed %i: sign-in records (upserts with their grant, client and uid, consumed, destroyed, grants revoked)', async (seed) => {
		const random = generator(100 + seed);
		const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
		let clock = Date.now();
		const adapter = oauthAdapter(store, () => clock);
		const grants = ['g1', 'g2'].map((id) => `${id}-${seed}`);
		const clients = ['c1', 'c2'].map((id) => `${id}-${seed}`);
		const ids = ['t1', 't2', 't3'].map((id) => `${id}-${seed}`);
		const granted = ['AccessToken', 'AuthorizationCode', 'RefreshToken'] as const;
		for (let i = 0; i < STEPS; i++) {
			clock += pick([0, 1_000, 61_000, 3_600_000, 90_000_000]);
			const grantId = pick(grants);
			switch (Math.floor(random() * 8)) {
				case 0:
				case 1: await adapter(pick(granted)).upsert(pick(ids), { grantId, accountId: 'key:fp' }, pick([60, 3_600, 14 * 86_400])); break;
				case 2: await adapter('Client').upsert(pick(clients), { client_id: 'c', redirect_uris: pick([[], ['https://app.example/cb']]) }, pick([undefined, 60])); break;
				case 3: await adapter('Grant').upsert(grantId, { jti: grantId, clientId: pick(clients), accountId: 'key:fp' }, pick([60, 14 * 86_400])); break;
				case 4: await adapter('Session').upsert(pick(ids), { uid: pick(['u1', 'u2']), accountId: 'key:fp' }, pick([60, 3_600])); break;
				case 5: await adapter(pick(granted)).consume(pick(ids)); break;
				case 6: await adapter(pick(granted)).destroy(pick(ids)); break;
				default: await adapter(pick(granted)).revokeByGrantId(grantId);
			}
		}
	});

	it('every step the server makes ran as both', () => {
		const notRun = recordStepNames().filter((name) => !store.ran.has(name));
		expect(notRun).toEqual([]);
	});
});
