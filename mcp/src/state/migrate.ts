import { createRecordName, type CreateRecord } from '../ledger';
import { jobRecordName, type JobEntry } from '../jobRecords';
import { PLAN_KEEP_MS, planRecordName } from '../planRecords';
import { spendRecordName, spentRecordName, type SpendRecord } from '../spendCap';
import { recordStep } from './recordStep';
import { KEEP_MS } from './records';
import type { StateStore } from './store';

/** Writes a record carried over from an earlier release, unless this release wrote it already. */
const adoptRecord = recordStep<{ value: unknown; expiresAtMs: number }, boolean>(
	'adopt record',
	([value], adopted, nowMs) => (value === undefined && adopted.expiresAtMs > nowMs ? { writes: [adopted], answer: true } : { writes: [undefined], answer: false }),
	`if redis.call('EXISTS', KEYS[1]) == 1 then return answer(false) end
save(1, args.value, args.expiresAtMs)
return answer(true)`,
);

/** Where the earlier release's whole documents are: the folder or the Redis they were written to. */
export interface LegacyDocuments {
	names(): Promise<string[]>;
	read(name: string): Promise<Record<string, unknown> | undefined>;
	/** Moves the document aside once its records are carried over. */
	retire(name: string): Promise<void>;
}

const HOUR_MS = 3_600_000;
/** An earlier release kept a month of spending; a job's record is kept as long, its slice a minute (the finest a cap counts in). */
const KEEP_SPEND_MS = 31 * 24 * HOUR_MS;
const MINUTE_MS = 60_000;

/**
 * Carries the whole documents of the release before records (one ledger for every create, one
 * document per key for its jobs, plan and spend) over into records, when the server starts: a
 * retry across the upgrade still gets its job. Each record is written only where none is yet, so
 * processes starting together carry the same documents over harmlessly; a document is moved aside
 * once carried over. Answers how many records were carried over.
 */
export async function migrateRecords(store: StateStore, legacy: LegacyDocuments, nowMs: number): Promise<number> {
	let adopted = 0;
	const adopt = async (name: string, value: unknown, expiresAtMs: number) => {
		if (await store.run(adoptRecord, [name], { value, expiresAtMs }, nowMs)) adopted++;
	};
	for (const name of await legacy.names()) {
		const doc = await legacy.read(name);
		if (!doc) continue;
		const [kind, fingerprint] = name.split(/-(.*)/s);
		if (kind === 'ledger') {
			for (const [key, record] of Object.entries((doc.creates ?? {}) as Record<string, CreateRecord & { sender?: string | number }>)) {
				const sender = record.sender === undefined ? {} : { sender: String(record.sender) };
				await adopt(createRecordName(key), { entry: record.entry, notedAtMs: record.notedAtMs, ...sender }, record.notedAtMs + KEEP_MS);
			}
		} else if (kind === 'jobs') {
			for (const [jobId, entry] of Object.entries((doc.jobs ?? {}) as Record<string, JobEntry>)) await adopt(jobRecordName(fingerprint, jobId), entry, entry.notedAtMs + KEEP_MS);
		} else if (kind === 'plan') {
			await adopt(planRecordName(fingerprint), { sent: doc.sent ?? [], places: doc.places ?? {} }, nowMs + PLAN_KEEP_MS);
		} else if (kind === 'spend') {
			const jobs = (doc.jobs ?? {}) as Record<string, { credits: number; atMs: number }>;
			const spend: SpendRecord = { slices: {}, creditsPerSecond: (doc.creditsPerSecond ?? {}) as Record<string, number>, holds: {} };
			for (const [jobId, job] of Object.entries(jobs)) {
				const slice = String(Math.floor(job.atMs / MINUTE_MS) * MINUTE_MS);
				spend.slices[slice] = (spend.slices[slice] ?? 0) + job.credits;
				await adopt(spentRecordName(fingerprint, jobId), job, job.atMs + KEEP_SPEND_MS);
			}
			await adopt(spendRecordName(fingerprint), spend, nowMs + KEEP_SPEND_MS);
		}
		// A cancellation lives minutes: none is worth carrying over.
		await legacy.retire(name);
	}
	return adopted;
}
