import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { PlanName } from '../../../core';
import type { SpendCap } from '../settings';
import { list, recordStep } from '../state/recordStep';
import type { StateStore } from '../state/store';
import type { KeySeal } from './sealedKey';

/** A person's own key is kept this long after their last sign-in; past it they sign in again. */
const ACCOUNT_KEEP_MS = 400 * 24 * 3_600_000;
/** Members are kept until an admin removes them. */
const MEMBER_KEEP_MS = 100 * 365 * 24 * 3_600_000;
/** The jobs a member's record names (their latest); the count goes on. */
const MEMBER_JOBS_KEPT = 50;
/** Who made a job is kept this long: the member reads their own job as long as the service keeps it. */
const JOB_MAKER_KEEP_MS = 400 * 24 * 3_600_000;
/** The apps a member's record names (the latest they signed in from). */
const MEMBER_APPS_KEPT = 10;

/** Who a token stands for: a person's own key (by its fingerprint), or a member of the team's key. */
export type AccountId = `key:${string}` | `member:${string}`;

export interface KeyAccount {
	sealed: string;
	plan: PlanName;
}

export interface Member {
	name: string;
	/** SHA-256 of the member's sign-in code (a random code, so a plain hash is enough). */
	codeHash: string;
	cap?: SpendCap;
	addedAtMs: number;
	/** The apps they signed in from, each at its latest sign-in, latest first: the first is their last sign-in. */
	apps?: MemberSignIn[];
}

/** A sign-in of a member's: when, and which app (its client id and the name it registered). */
export interface MemberSignIn {
	atMs: number;
	clientId: string;
	app: string;
}

/**
 * Which member made a job, as of which membership (their added time: a name removed and added
 * again is someone new, who did not make the jobs of the name before).
 */
export interface JobMaker {
	member: string;
	since: number;
}

export interface MemberJobs {
	count: number;
	latest: { jobId: string; atMs: number }[];
}

// Every team record shares the {team} hash tag: a step on a member and the list of members stays on one Redis Cluster slot.
const keyAccountName = (fingerprint: string) => `account:{${fingerprint}}`;
const memberName = (name: string) => `member:{team}:${name}`;
const memberJobsName = (name: string) => `member-jobs:{team}:${name}`;
const jobMakerName = (jobId: string) => `job-maker:{team}:${jobId}`;
const MEMBERS = 'members:{team}';

/** A member's name as typed at sign-in and in the CLI: letters, digits, dot, dash, underscore, @. */
export const MEMBER_NAME = /^[A-Za-z0-9._@-]{1,64}$/;

const hashCode = (code: string) => createHash('sha256').update(code.trim()).digest('hex');

const keepAccount = recordStep<{ account: KeyAccount; expiresAtMs: number }, void>(
	'keep key account',
	(_values, { account, expiresAtMs }) => ({
		writes: [{ value: account, expiresAtMs }],
		answer: undefined,
	}),
	`save(1, args.account, args.expiresAtMs)
return nil`,
);

const addMember = recordStep<{ member: Member; expiresAtMs: number }, boolean>(
	'add member',
	([existing, index], { member, expiresAtMs }) => {
		if (existing !== undefined) return { writes: [undefined, undefined], answer: false };
		const names = list<string>((index as { names?: unknown } | undefined)?.names);
		return {
			writes: [
				{ value: member, expiresAtMs },
				{ value: { names: [...names, member.name] }, expiresAtMs },
			],
			answer: true,
		};
	},
	`if load(1) ~= nil then return answer(false) end
local index = load(2) or {}
local names = index.names or {}
table.insert(names, args.member.name)
save(1, args.member, args.expiresAtMs)
save(2, { names = names }, args.expiresAtMs)
return answer(true)`,
);

const removeMember = recordStep<{ name: string; expiresAtMs: number }, boolean>(
	'remove member',
	([existing, index, _jobs], { name, expiresAtMs }) => {
		const names = list<string>((index as { names?: unknown } | undefined)?.names).filter(
			(kept) => kept !== name,
		);
		return {
			writes: [null, names.length ? { value: { names }, expiresAtMs } : null, null],
			answer: existing !== undefined,
		};
	},
	`local existed = load(1) ~= nil
local index = load(2) or {}
local names = {}
for _, kept in ipairs(index.names or {}) do if kept ~= args.name then table.insert(names, kept) end end
redis.call('DEL', KEYS[1], KEYS[3])
if #names > 0 then save(2, { names = names }, args.expiresAtMs) else redis.call('DEL', KEYS[2]) end
return answer(existed)`,
);

const capMember = recordStep<{ cap: SpendCap | null; expiresAtMs: number }, boolean>(
	'cap member',
	([existing], { cap, expiresAtMs }) => {
		if (existing === undefined) return { writes: [undefined], answer: false };
		const member = { ...(existing as Member) };
		if (cap) member.cap = cap;
		else delete member.cap;
		return { writes: [{ value: member, expiresAtMs }], answer: true };
	},
	`local member = load(1)
if member == nil then return answer(false) end
if args.cap == cjson.null then member.cap = nil else member.cap = args.cap end
save(1, member, args.expiresAtMs)
return answer(true)`,
);

const noteMemberJob = recordStep<
	{ jobId: string; atMs: number; kept: number; expiresAtMs: number; maker: JobMaker; makerExpiresAtMs: number },
	void
>(
	'note member job',
	([value, made], { jobId, atMs, kept, expiresAtMs, maker, makerExpiresAtMs }) => {
		const jobs = value as MemberJobs | undefined;
		const latest = list<MemberJobs['latest'][number]>(jobs?.latest);
		// The job's maker is written once: a job is never handed to another member.
		const makerWrite = made === undefined ? { value: maker, expiresAtMs: makerExpiresAtMs } : undefined;
		if (latest.some((job) => job.jobId === jobId))
			return { writes: [undefined, makerWrite], answer: undefined };
		return {
			writes: [
				{
					value: {
						count: (jobs?.count ?? 0) + 1,
						latest: [{ jobId, atMs }, ...latest].slice(0, kept),
					},
					expiresAtMs,
				},
				makerWrite,
			],
			answer: undefined,
		};
	},
	`if load(2) == nil then save(2, args.maker, args.makerExpiresAtMs) end
local jobs = load(1) or {}
local latest = {}
for _, job in ipairs(jobs.latest or {}) do
	if job.jobId == args.jobId then return nil end
end
table.insert(latest, { jobId = args.jobId, atMs = args.atMs })
for _, job in ipairs(jobs.latest or {}) do if #latest < args.kept then table.insert(latest, job) end end
save(1, { count = (jobs.count or 0) + 1, latest = latest }, args.expiresAtMs)
return nil`,
);

/** Notes a member's sign-in on their record: when, and from which app; nothing for a member removed meanwhile. */
const noteMemberSignIn = recordStep<{ signIn: MemberSignIn; kept: number; expiresAtMs: number }, void>(
	'note member sign-in',
	([existing], { signIn, kept, expiresAtMs }) => {
		if (existing === undefined) return { writes: [undefined], answer: undefined };
		const member = existing as Member;
		const apps = [signIn, ...list<MemberSignIn>(member.apps).filter((app) => app.clientId !== signIn.clientId)].slice(0, kept);
		return { writes: [{ value: { ...member, apps }, expiresAtMs }], answer: undefined };
	},
	`local member = load(1)
if member == nil then return nil end
local apps = { args.signIn }
for _, app in ipairs(member.apps or {}) do
	if app.clientId ~= args.signIn.clientId and #apps < args.kept then table.insert(apps, app) end
end
member.apps = apps
save(1, member, args.expiresAtMs)
return nil`,
);

/**
 * Who may sign in, and what their tokens stand for: a person's own key, sealed (see KeySeal), or
 * a member of the team whose key the server holds. Each is a record of its own, changed by one
 * step; the team's list of members is read by the admin's CLI, never on a call's path.
 */
export class Accounts {
	constructor(
		private readonly store: StateStore,
		private readonly now: () => number = Date.now,
	) {}

	async keepKey(
		fingerprint: string,
		apiKey: string,
		plan: PlanName,
		seal: KeySeal,
	): Promise<AccountId> {
		const name = keyAccountName(fingerprint);
		const nowMs = this.now();
		await this.store.run(
			keepAccount,
			[name],
			{ account: { sealed: seal.seal(apiKey, name), plan }, expiresAtMs: nowMs + ACCOUNT_KEEP_MS },
			nowMs,
		);
		return `key:${fingerprint}`;
	}

	/** The person's key and plan, when their account is kept and opens with this secret. */
	async keyOf(
		fingerprint: string,
		seal: KeySeal,
	): Promise<{ apiKey: string; plan: PlanName } | undefined> {
		const name = keyAccountName(fingerprint);
		const account = await this.store.get<KeyAccount>(name);
		const apiKey = account && seal.open(account.sealed, name);
		return account && apiKey ? { apiKey, plan: account.plan } : undefined;
	}

	/** Adds a member and answers their sign-in code (shown once), or undefined when the name is taken. */
	async addMember(name: string, cap?: SpendCap): Promise<string | undefined> {
		const code = `ovm_${randomBytes(18).toString('base64url')}`;
		const nowMs = this.now();
		const member: Member = {
			name,
			codeHash: hashCode(code),
			addedAtMs: nowMs,
			...(cap ? { cap } : {}),
		};
		const added = await this.store.run(
			addMember,
			[memberName(name), MEMBERS],
			{ member, expiresAtMs: nowMs + MEMBER_KEEP_MS },
			nowMs,
		);
		return added ? code : undefined;
	}

	/** Removes the member: their next request, and their tokens' next refresh, are refused. */
	async removeMember(name: string): Promise<boolean> {
		const nowMs = this.now();
		return await this.store.run(
			removeMember,
			[memberName(name), MEMBERS, memberJobsName(name)],
			{ name, expiresAtMs: nowMs + MEMBER_KEEP_MS },
			nowMs,
		);
	}

	async capMember(name: string, cap: SpendCap | undefined): Promise<boolean> {
		const nowMs = this.now();
		return await this.store.run(
			capMember,
			[memberName(name)],
			{ cap: cap ?? null, expiresAtMs: nowMs + MEMBER_KEEP_MS },
			nowMs,
		);
	}

	async member(name: string): Promise<Member | undefined> {
		return await this.store.get<Member>(memberName(name));
	}

	/** The member, when the code is theirs. */
	async memberSigningIn(name: string, code: string): Promise<Member | undefined> {
		const member = MEMBER_NAME.test(name) ? await this.member(name) : undefined;
		if (!member) return undefined;
		const given = Buffer.from(hashCode(code), 'hex');
		const kept = Buffer.from(member.codeHash, 'hex');
		return given.length === kept.length && timingSafeEqual(given, kept) ? member : undefined;
	}

	async members(): Promise<{ member: Member; jobs: MemberJobs }[]> {
		const index = await this.store.get<{ names?: unknown }>(MEMBERS);
		const found = await Promise.all(
			list<string>(index?.names).map(async (name) => ({
				member: await this.member(name),
				jobs: (await this.store.get<MemberJobs>(memberJobsName(name))) ?? { count: 0, latest: [] },
			})),
		);
		return found
			.filter((entry): entry is { member: Member; jobs: MemberJobs } => entry.member !== undefined)
			.map(({ member, jobs }) => ({
				member,
				jobs: { count: jobs.count, latest: list(jobs.latest) },
			}));
	}

	/** Notes a job the member made: counted on their record, and theirs alone to read (see ownJob). */
	async noteMemberJob(member: { name: string; since?: number }, jobId: string): Promise<void> {
		const nowMs = this.now();
		await this.store.run(
			noteMemberJob,
			[memberJobsName(member.name), jobMakerName(jobId)],
			{
				jobId,
				atMs: nowMs,
				kept: MEMBER_JOBS_KEPT,
				expiresAtMs: nowMs + MEMBER_KEEP_MS,
				maker: { member: member.name, since: member.since ?? 0 },
				makerExpiresAtMs: nowMs + JOB_MAKER_KEEP_MS,
			},
			nowMs,
		);
	}

	/** Who made the job, when a member did (one read, whether the job exists or not). */
	async jobMaker(jobId: string): Promise<JobMaker | undefined> {
		return await this.store.get<JobMaker>(jobMakerName(jobId));
	}

	/** The member's jobs: how many they made, and the latest (newest first). */
	async memberJobs(name: string): Promise<MemberJobs | undefined> {
		if (!(await this.member(name))) return undefined;
		const jobs = await this.store.get<MemberJobs>(memberJobsName(name));
		return { count: jobs?.count ?? 0, latest: list(jobs?.latest) };
	}

	/** Notes that the member signed in now, from this app (for the admin's `members list`). */
	async noteMemberSignIn(name: string, app: { clientId: string; name: string }): Promise<void> {
		const nowMs = this.now();
		await this.store.run(
			noteMemberSignIn,
			[memberName(name)],
			{ signIn: { atMs: nowMs, clientId: app.clientId, app: app.name }, kept: MEMBER_APPS_KEPT, expiresAtMs: nowMs + MEMBER_KEEP_MS },
			nowMs,
		);
	}
}
