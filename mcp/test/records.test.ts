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
import { oauthAdapter } from '../src/signIn/oauthRecords';
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
		expect(await ledger.answerPending('idem_a')).toBe(true);
		const firstNoted = await ledger.notedAt('idem_a');
		await ledger.note('idem_a', { jobId: 'job_a' });
		expect(await ledger.find('idem_a')).toEqual({ jobId: 'job_a' });
		expect(await ledger.notedAt('idem_a')).toBe(firstNoted);
		expect(await ledger.claim('idem_a', { sentAtMs: 2 })).toEqual({ jobId: 'job_a' });
		await ledger.claim('idem_b', { sentAtMs: 3 });
		await ledger.answerLost('idem_b');
		expect(await ledger.answerPending('idem_b')).toBe(false);
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
		await accounts.noteMemberJob('ann', 'job_1');
		await accounts.noteMemberJob('ann', 'job_1');
		await accounts.noteMemberJob('ann', 'job_2');
		const listed = await accounts.members();
		expect(listed.map(({ member }) => member.name).sort()).toEqual(['ann', 'ben']);
		const ann = listed.find(({ member }) => member.name === 'ann');
		expect(ann?.member.cap).toEqual({ credits: 10, periodHours: 1 });
		expect(ann?.jobs).toEqual({ count: 2, latest: [expect.objectContaining({ jobId: 'job_2' }), expect.objectContaining({ jobId: 'job_1' })] });
		expect(listed.find(({ member }) => member.name === 'ben')?.member.cap ?? undefined).toBeUndefined();
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

	it('every step the server makes ran as both', () => {
		const notRun = recordStepNames().filter((name) => !store.ran.has(name));
		expect(notRun).toEqual([]);
	});
});
