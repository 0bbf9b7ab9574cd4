import type { Reply } from './httpUtil';

const RETENTION_MS = 24 * 3_600_000;

interface Entry {
	fingerprint: string;
	storedAt: number;
	reply?: Reply;
}

/**
 * Idempotency-Key semantics (docs/api.md#idempotency), per account, kept 24 h (virtual): same key and body
 * → the original answer with Idempotent-Replayed; other body → 422; still in flight → 409.
 */
export class IdempotencyStore {
	private readonly entries = new Map<string, Entry>();

	begin(
		scope: string,
		key: string,
		fingerprint: string,
		now: number,
	): { kind: 'new' } | { kind: 'replay'; reply: Reply } | { kind: 'conflict' } | { kind: 'reused' } {
		const id = `${scope}\u0000${key}`;
		const entry = this.entries.get(id);
		if (entry && now - entry.storedAt < RETENTION_MS) {
			if (entry.fingerprint !== fingerprint) return { kind: 'reused' };
			if (!entry.reply) return { kind: 'conflict' };
			return { kind: 'replay', reply: { ...entry.reply, headers: { ...entry.reply.headers, 'Idempotent-Replayed': 'true' } } };
		}
		this.entries.set(id, { fingerprint, storedAt: now });
		return { kind: 'new' };
	}

	/** Stores the answer to replay; a request that created nothing is forgotten so it may be retried. */
	finish(scope: string, key: string, reply: Reply | undefined): void {
		const id = `${scope}\u0000${key}`;
		const entry = this.entries.get(id);
		if (!entry) return;
		if (reply) entry.reply = reply;
		else this.entries.delete(id);
	}

	reset(): void {
		this.entries.clear();
	}
}
