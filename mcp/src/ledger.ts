import type { LedgerEntry, SharedJobLedger } from '../../core';
import { Doc, KEEP_MS, pruneOlderThan } from './state/records';
import type { StateStore } from './state/store';

interface LedgerRecord {
	entry: LedgerEntry;
	notedAtMs: number;
	/** The process that sent the create (the store's holder; a pid in older files), while its answer may still come. */
	sender?: string | number;
}

/** A create's answer comes within this (the request's own timeout): one sent longer ago lost its answer. */
const CREATE_ANSWER_MS = 120_000;

export interface LedgerState {
	creates: Record<string, LedgerRecord>;
}

/**
 * core's ledger on the server's store: which job each create made, by idempotency key, so that a
 * call asked again, in this process, after a restart or in another process on the machine, is
 * answered from our own records whether or not the service honours the key. A create is claimed
 * here before it is sent: of two processes asked the same create at once, one sends it.
 */
export class ServerLedger implements SharedJobLedger {
	private readonly doc: Doc<LedgerState>;

	constructor(
		private readonly store: StateStore,
		private readonly now: () => number,
	) {
		this.doc = new Doc(store, 'ledger', () => ({ creates: {} }));
	}

	async find(idempotencyKey: string): Promise<LedgerEntry | undefined> {
		return this.live((await this.doc.read()).creates[idempotencyKey])?.entry;
	}

	/** When each create still kept was noted (sent or answered), for telling a retry from a new request. */
	async notedTimes(): Promise<(idempotencyKey: string) => number | undefined> {
		const { creates } = await this.doc.read();
		return (key) => this.live(creates[key])?.notedAtMs;
	}

	async note(idempotencyKey: string, entry: LedgerEntry): Promise<void> {
		await this.doc.change((state) => {
			pruneOlderThan(state.creates, (record) => record.notedAtMs, this.now());
			// The first time the request was noted stays its time: the retry window runs from it.
			const notedAtMs = this.live(state.creates[idempotencyKey])?.notedAtMs ?? this.now();
			state.creates[idempotencyKey] = { entry, notedAtMs, ...('sentAtMs' in entry ? { sender: this.store.holder } : {}) };
		});
	}

	async claim(idempotencyKey: string, entry: { sentAtMs: number }): Promise<LedgerEntry | undefined> {
		return this.doc.change((state) => {
			pruneOlderThan(state.creates, (record) => record.notedAtMs, this.now());
			const known = this.live(state.creates[idempotencyKey]);
			if (known) return known.entry;
			state.creates[idempotencyKey] = { entry, notedAtMs: this.now(), sender: this.store.holder };
			return undefined;
		});
	}

	/**
	 * Whether the create of this key is being sent by a live process whose answer may still come:
	 * a call asked again then waits for it rather than being told its outcome is unknown.
	 */
	async answerPending(idempotencyKey: string): Promise<boolean> {
		const record = this.live((await this.doc.read()).creates[idempotencyKey]);
		if (!record || !('sentAtMs' in record.entry) || record.sender === undefined) return false;
		return this.now() - record.entry.sentAtMs < CREATE_ANSWER_MS && (await this.store.alive(String(record.sender)));
	}

	/** This process saw the create fail without an answer: nobody waits for it any more. */
	async answerLost(idempotencyKey: string): Promise<void> {
		await this.doc.change((state) => {
			const record = state.creates[idempotencyKey];
			if (record && 'sentAtMs' in record.entry) delete record.sender;
		});
	}

	async forget(idempotencyKey: string): Promise<void> {
		await this.doc.change((state) => {
			delete state.creates[idempotencyKey];
		});
	}

	private live(record: LedgerRecord | undefined): LedgerRecord | undefined {
		return record && this.now() - record.notedAtMs < KEEP_MS ? record : undefined;
	}
}
