import type { LedgerEntry } from '../../core';

/**
 * A ledger entry as the n8n node stores it (execution data, static data): short keys, since a
 * batch keeps hundreds. `j` the job id, or `s` when the create was sent (ms since the epoch),
 * outcome unseen.
 */
export type StoredEntry = { j: string } | { s: number };

export function toStored(entry: LedgerEntry): StoredEntry {
	return 'jobId' in entry ? { j: entry.jobId } : { s: entry.sentAtMs };
}

export function fromStored(stored: StoredEntry): LedgerEntry {
	return 'j' in stored ? { jobId: stored.j } : { sentAtMs: stored.s };
}
