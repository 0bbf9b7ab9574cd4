import { perKey } from '../pacing/perKey';

/** How long a key is kept: the time the service says it remembers a request (docs/api.md). */
const KEEP_MS = 24 * 3_600_000;
/** How many keys one API key's memory keeps (a record is a few hundred bytes: the body is kept). */
const REMEMBERED = 5_000;

/**
 * The jobs this process's creates made, by idempotency key, for one API key. A host's own records
 * (n8n's node context) can be lost or overwritten with older ones: n8n 2.x lets a webhook process
 * resume an execution with the data it read before another process ran and parked a step, so that
 * step's rows look unmade again. When the step that follows runs in this process, a create of such
 * a row finds its job here and is not sent again. Another process does not find it. As the
 * service's replay, it answers only the same key with the same body (`body`: its canonical JSON).
 */
export class MadeJobs {
	private readonly made = new Map<string, { jobId: string; body: string; atMs: number }>();

	remember(idempotencyKey: string, body: string, jobId: string, atMs: number): void {
		this.made.delete(idempotencyKey);
		this.made.set(idempotencyKey, { jobId, body, atMs });
		if (this.made.size > REMEMBERED) this.made.delete(this.made.keys().next().value as string);
	}

	find(idempotencyKey: string, body: string, nowMs: number): string | undefined {
		const entry = this.made.get(idempotencyKey);
		return entry && entry.body === body && nowMs - entry.atMs <= KEEP_MS ? entry.jobId : undefined;
	}
}

/** The memory of one key in this process, shared like its limiter. */
export const sharedMadeJobs = perKey(() => new MadeJobs());
