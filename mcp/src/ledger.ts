import type { JobLedger, LedgerEntry } from '../../core';
import { recordStep } from './state/recordStep';
import { KEEP_MS } from './state/records';
import type { StateStore } from './state/store';

/** A create's record: what it made (or when it was sent), when first noted, and who sent it. */
export interface CreateRecord {
	entry: LedgerEntry;
	notedAtMs: number;
	/** The process that sent the create (the store's holder), while its answer may still come. */
	sender?: string;
}

/** A create's answer comes within this (the request's own timeout): one sent longer ago lost its answer. */
const CREATE_ANSWER_MS = 120_000;

/** The record of the create of one idempotency key: its own hash tag, every step on it a step on it alone. */
export const createRecordName = (idempotencyKey: string): string => `create:{${idempotencyKey}}`;

/** Claims the create for the sender unless it is recorded already (answers the record). */
export const claimCreate = recordStep<{ entry: LedgerEntry; sender: string }, CreateRecord | undefined>(
	'claim create',
	([value], { entry, sender }, nowMs) => {
		const known = value as CreateRecord | undefined;
		if (known) return { writes: [undefined], answer: known };
		return { writes: [{ value: { entry, notedAtMs: nowMs, sender }, expiresAtMs: nowMs + KEEP_MS }], answer: undefined };
	},
	`local known = load(1)
if known then return answer(known) end
save(1, { entry = args.entry, notedAtMs = now, sender = args.sender }, now + ${KEEP_MS})
return nil`,
);

/** Notes what the create made (or that it is being sent); the first time it was noted stays its time. */
export const noteCreate = recordStep<{ entry: LedgerEntry; sender?: string }, void>(
	'note create',
	([value], { entry, sender }, nowMs) => {
		const notedAtMs = (value as CreateRecord | undefined)?.notedAtMs ?? nowMs;
		return { writes: [{ value: { entry, notedAtMs, ...(sender === undefined ? {} : { sender }) }, expiresAtMs: notedAtMs + KEEP_MS }], answer: undefined };
	},
	`local known = load(1)
local notedAtMs = now
if known then notedAtMs = known.notedAtMs end
save(1, { entry = args.entry, notedAtMs = notedAtMs, sender = args.sender }, notedAtMs + ${KEEP_MS})
return nil`,
);

/** The sender saw its create fail without an answer: nobody waits for it any more. */
export const createAnswerLost = recordStep<null, void>(
	'create answer lost',
	([value]) => {
		const known = value as CreateRecord | undefined;
		if (!known || !('sentAtMs' in known.entry)) return { writes: [undefined], answer: undefined };
		const { sender: _sender, ...rest } = known;
		return { writes: [{ value: rest, expiresAtMs: known.notedAtMs + KEEP_MS }], answer: undefined };
	},
	`local known = load(1)
if known and known.entry.sentAtMs then
	known.sender = nil
	save(1, known, known.notedAtMs + ${KEEP_MS})
end
return nil`,
);

export const forgetCreate = recordStep<null, void>('forget create', () => ({ writes: [null], answer: undefined }), `redis.call('DEL', KEYS[1])
return nil`);

/** A create's record as a call reads it once: what it made or when it was sent (pending: its sender may still be answered), and when first noted. */
export interface ReadCreate {
	entry: LedgerEntry;
	notedAtMs: number;
}

/**
 * core's ledger on the server's store: which job each create made, by idempotency key, so that a
 * call asked again, in this process, after a restart or in another process or replica, is answered
 * from our own records whether or not the service honours the key. A create is claimed here before
 * it is sent: of two processes asked the same create at once, one sends it. Each create is a
 * record of its own, kept a day from when it was first noted.
 */
export class ServerLedger implements JobLedger {
	constructor(
		private readonly store: StateStore,
		private readonly now: () => number,
	) {}

	async find(idempotencyKey: string): Promise<LedgerEntry | undefined> {
		return (await this.read(idempotencyKey))?.entry;
	}

	/** The create's record, with whether a create sent is still pending (see ReadCreate). */
	async read(idempotencyKey: string): Promise<ReadCreate | undefined> {
		const record = await this.store.get<CreateRecord>(createRecordName(idempotencyKey));
		// The store's clock decides what expired; the ledger's own says the same for a store that keeps longer.
		if (!record || this.now() - record.notedAtMs >= KEEP_MS) return undefined;
		return { entry: await this.pending(record.entry, record.sender), notedAtMs: record.notedAtMs };
	}

	async note(idempotencyKey: string, entry: LedgerEntry): Promise<void> {
		await this.store.run(noteCreate, [createRecordName(idempotencyKey)], { entry, ...('sentAtMs' in entry ? { sender: this.store.holder } : {}) }, this.now());
	}

	async claim(idempotencyKey: string, entry: { sentAtMs: number }): Promise<LedgerEntry | undefined> {
		const known = await this.store.run(claimCreate, [createRecordName(idempotencyKey)], { entry, sender: this.store.holder }, this.now());
		return known && (await this.pending(known.entry, known.sender));
	}

	async answerLost(idempotencyKey: string): Promise<void> {
		await this.store.run(createAnswerLost, [createRecordName(idempotencyKey)], null, this.now());
	}

	async forget(idempotencyKey: string): Promise<void> {
		await this.store.run(forgetCreate, [createRecordName(idempotencyKey)], null, this.now());
	}

	/**
	 * A create sent by a live process whose answer may still come is pending: a call asked again
	 * then waits for it rather than being told its outcome is unknown.
	 */
	private async pending(entry: LedgerEntry, sender: string | undefined): Promise<LedgerEntry> {
		if (!('sentAtMs' in entry) || sender === undefined || this.now() - entry.sentAtMs >= CREATE_ANSWER_MS) return entry;
		return { sentAtMs: entry.sentAtMs, pending: await this.store.alive(sender) };
	}
}
