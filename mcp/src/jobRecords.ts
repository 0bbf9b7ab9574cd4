import { isTerminal, type JobRecord } from '../../core';
import { list, recordStep } from './state/recordStep';
import { KEEP_MS } from './state/records';

/** A job as last seen, and when: what a call answers from instead of asking the service again. */
export interface Seen {
	job: JobRecord;
	seenAtMs: number;
}

/** The process that looks the job up for everyone, until when, and when its next look is due. */
export interface Looker {
	by: string;
	untilMs: number;
	nextLookAtMs?: number;
}

/**
 * What the server knows of one job it made or looked at, kept for every process and restart: when
 * it was made and is expected to end, what was last seen of it, who looks it up, and when a
 * callback for it came that a lookup must confirm.
 */
export interface JobEntry {
	seen?: Seen;
	looker?: Looker;
	expectedEndAtMs?: number;
	createdAtMs?: number;
	notedAtMs: number;
	callbackAtMs?: number;
}

/** A job's record, tagged with its key's fingerprint (the steps on a key's records share a Redis Cluster slot). */
export const jobRecordName = (fingerprint: string, jobId: string): string => `job:{${fingerprint}}:${jobId}`;

/** The record as written by any store (Redis writes an empty list as {}). */
export function jobEntryFrom(value: unknown): JobEntry | undefined {
	const entry = value as JobEntry | undefined;
	if (entry?.seen) entry.seen.job = { ...entry.seen.job, resultUrls: list<string>(entry.seen.job.resultUrls) };
	return entry;
}

const kept = (entry: JobEntry) => ({ value: entry, expiresAtMs: entry.notedAtMs + KEEP_MS });

const LUA_TERMINAL = `local function terminal(job) return job ~= nil and (job.status == 'done' or job.status == 'failed') end`;

/** Notes the job as just seen, and when it was created and is expected to end when that is first learned. */
export const noteJobSeen = recordStep<{ job: JobRecord; createdAtMs?: number; expectedEndAtMs?: number }, void>(
	'note job seen',
	([value], { job, createdAtMs, expectedEndAtMs }, nowMs) => {
		const known = jobEntryFrom(value);
		const entry: JobEntry = {
			...known,
			expectedEndAtMs: known?.expectedEndAtMs ?? expectedEndAtMs,
			createdAtMs: known?.createdAtMs ?? createdAtMs,
			seen: { job, seenAtMs: nowMs },
			notedAtMs: known?.notedAtMs ?? nowMs,
		};
		return { writes: [kept(entry)], answer: undefined };
	},
	`local entry = load(1) or {}
if entry.expectedEndAtMs == nil then entry.expectedEndAtMs = args.expectedEndAtMs end
if entry.createdAtMs == nil then entry.createdAtMs = args.createdAtMs end
entry.seen = { job = args.job, seenAtMs = now }
if entry.notedAtMs == nil then entry.notedAtMs = now end
save(1, entry, entry.notedAtMs + ${KEEP_MS})
return nil`,
);

/**
 * A callback for the job reached a replica: a verified one ending the job is its end, an
 * unverified one is noted for the watching process to confirm. False for a job not recorded
 * (forged, or another server's): nothing written.
 */
export const noteCallback = recordStep<{ job: JobRecord; verified: boolean }, boolean>(
	'note callback',
	([value], { job, verified }, nowMs) => {
		const entry = jobEntryFrom(value);
		if (!entry) return { writes: [undefined], answer: false };
		if (verified) {
			if (isTerminal(job) && !(entry.seen && isTerminal(entry.seen.job))) entry.seen = { job, seenAtMs: nowMs };
		} else entry.callbackAtMs = nowMs;
		return { writes: [kept(entry)], answer: true };
	},
	`${LUA_TERMINAL}
local entry = load(1)
if not entry then return answer(false) end
if args.verified then
	if terminal(args.job) and not (entry.seen and terminal(entry.seen.job)) then entry.seen = { job = args.job, seenAtMs = now } end
else
	entry.callbackAtMs = now
end
save(1, entry, entry.notedAtMs + ${KEEP_MS})
return answer(true)`,
);

/** Takes the job's looks for `me` unless another process (not `gone`) holds them; true also for a job not recorded. */
export const takeLooks = recordStep<{ me: string; gone?: string; untilMs: number }, boolean>(
	'take job looks',
	([value], { me, gone, untilMs }, nowMs) => {
		const entry = jobEntryFrom(value);
		if (!entry) return { writes: [undefined], answer: true };
		if (entry.looker && entry.looker.by !== me && entry.looker.by !== gone && entry.looker.untilMs > nowMs) return { writes: [undefined], answer: false };
		entry.looker = { by: me, untilMs };
		return { writes: [kept(entry)], answer: true };
	},
	`local entry = load(1)
if not entry then return answer(true) end
local looker = entry.looker
if looker and looker.by ~= args.me and looker.by ~= args.gone and looker.untilMs > now then return answer(false) end
entry.looker = { by = args.me, untilMs = args.untilMs }
save(1, entry, entry.notedAtMs + ${KEEP_MS})
return answer(true)`,
);

/** The holder's next look is due then: its hold lasts until `untilMs`. Nothing when another holds the looks. */
export const holdLooks = recordStep<{ me: string; untilMs: number; nextLookAtMs: number }, void>(
	'hold job looks',
	([value], { me, untilMs, nextLookAtMs }) => {
		const entry = jobEntryFrom(value);
		if (entry?.looker?.by !== me) return { writes: [undefined], answer: undefined };
		entry.looker = { by: me, untilMs, nextLookAtMs };
		return { writes: [kept(entry)], answer: undefined };
	},
	`local entry = load(1)
if not entry or not entry.looker or entry.looker.by ~= args.me then return nil end
entry.looker = { by = args.me, untilMs = args.untilMs, nextLookAtMs = args.nextLookAtMs }
save(1, entry, entry.notedAtMs + ${KEEP_MS})
return nil`,
);

/** The holder stops looking short of the job's end: another process may take the looks at once. */
export const dropLooks = recordStep<{ me: string }, void>(
	'drop job looks',
	([value], { me }) => {
		const entry = jobEntryFrom(value);
		if (entry?.looker?.by !== me) return { writes: [undefined], answer: undefined };
		delete entry.looker;
		return { writes: [kept(entry)], answer: undefined };
	},
	`local entry = load(1)
if not entry or not entry.looker or entry.looker.by ~= args.me then return nil end
entry.looker = nil
save(1, entry, entry.notedAtMs + ${KEEP_MS})
return nil`,
);
