import { createHash } from 'node:crypto';
import { errorReply, type Reply } from './httpUtil';

const RETENTION_MS = 24 * 3_600_000;

function fingerprint(body: unknown): string {
	return createHash('sha256').update(JSON.stringify(body ?? null)).digest('hex');
}

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

	/**
	 * Answers a request made with an Idempotency-Key (or none) once: a repeat with the same body
	 * gets the stored answer, a different body 422, a repeat while `work` still runs 409. A 2xx
	 * answer is kept for replay; any other created nothing, so the key is forgotten and may be retried.
	 */
	async once(scope: string, key: string | undefined, body: unknown, now: number, work: () => Reply | Promise<Reply>): Promise<Reply> {
		if (!key) return await work();
		const seen = this.begin(scope, key, fingerprint(body), now);
		if (seen.kind === 'replay') return seen.reply;
		if (seen.kind === 'conflict') return errorReply(409, 'idempotency_conflict', 'A request with this Idempotency-Key is still in flight.');
		if (seen.kind === 'reused') return errorReply(422, 'idempotency_key_reused', 'This Idempotency-Key was used for a different request.');
		const reply = await work();
		this.finish(scope, key, reply.status >= 200 && reply.status < 300 ? reply : undefined);
		return reply;
	}

	private begin(
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

	private finish(scope: string, key: string, reply: Reply | undefined): void {
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
