import type { JobLedger, LedgerEntry } from '../../core';
import type { StateFile } from './stateFile';

/** How long a create's record is kept: as long as the service keeps an idempotency key (docs/api.md#idempotency). */
const KEEP_MS = 24 * 60 * 60_000;

export interface LedgerState {
	creates: Record<string, { entry: LedgerEntry; notedAtMs: number }>;
}

/**
 * core's JobLedger on the server's state: which job each create made, by idempotency key, so that
 * a call asked again is answered from our own records whether or not the service honours the key.
 */
export class ServerLedger implements JobLedger {
	constructor(
		private readonly file: StateFile<LedgerState>,
		private readonly now: () => number,
	) {}

	find(idempotencyKey: string): LedgerEntry | undefined {
		const record = this.file.state.creates[idempotencyKey];
		return record && this.now() - record.notedAtMs < KEEP_MS ? record.entry : undefined;
	}

	/** When the create of this key was noted (sent or answered), if it still is. */
	notedAtMs(idempotencyKey: string): number | undefined {
		return this.find(idempotencyKey) ? this.file.state.creates[idempotencyKey].notedAtMs : undefined;
	}

	note(idempotencyKey: string, entry: LedgerEntry): void {
		this.file.update((state) => {
			for (const [key, record] of Object.entries(state.creates)) if (this.now() - record.notedAtMs >= KEEP_MS) delete state.creates[key];
			state.creates[idempotencyKey] = { entry, notedAtMs: this.now() };
		});
	}

	forget(idempotencyKey: string): void {
		this.file.update((state) => {
			delete state.creates[idempotencyKey];
		});
	}
}
