import { parseJob } from '../answers/parseJob';

/** Deliveries are retried for about a day; remembering them a bit longer covers every retry. */
const KEEP_MS = 26 * 60 * 60 * 1000;
const MAX_REMEMBERED = 10_000;

export type GuardedOutcome<T> = { duplicate: true } | { duplicate: false; value: T };

/**
 * Lets each delivery id start work at most once in this process, even when copies arrive at the
 * same moment: a copy that comes while the first is still being checked waits for its verdict
 * instead of reading a "not seen yet" that is about to change (check-then-set across an await).
 * A delivery that was refused (forged, premature) leaves no mark, so a genuine copy still counts.
 */
export class DeliveryGuard {
	private readonly admitted = new Map<string, number>();
	private readonly deciding = new Map<string, Promise<unknown>>();

	/**
	 * Runs `decide` for the first copy of `deliveryId`; it returns whether the delivery was taken.
	 * Copies seen while or after one was taken are reported as duplicates without running it.
	 */
	async admit<T>(
		deliveryId: string,
		nowMs: number,
		decide: () => Promise<{ taken: boolean; value: T }>,
	): Promise<GuardedOutcome<T>> {
		for (;;) {
			const at = this.admitted.get(deliveryId);
			if (at !== undefined && nowMs - at < KEEP_MS) return { duplicate: true };
			const pending = this.deciding.get(deliveryId);
			if (!pending) break;
			await pending.catch(() => undefined);
		}
		const decision = decide();
		this.deciding.set(deliveryId, decision);
		try {
			const { taken, value } = await decision;
			if (taken) this.remember(deliveryId, nowMs);
			return { duplicate: false, value };
		} finally {
			this.deciding.delete(deliveryId);
		}
	}

	private remember(deliveryId: string, nowMs: number): void {
		this.admitted.set(deliveryId, nowMs);
		if (this.admitted.size <= MAX_REMEMBERED) return;
		// Maps keep insertion order: the oldest entries go first.
		for (const [id, at] of this.admitted) {
			if (this.admitted.size <= MAX_REMEMBERED && nowMs - at < KEEP_MS) break;
			this.admitted.delete(id);
		}
	}
}

/**
 * What a callback claims, as a key for the guard: the job and the status it reports. A job ends
 * once, so its "done" starts work once, however many deliveries (retries, replays, copies with
 * new webhook ids) carry it. Undefined when the body names no job.
 */
export function claimedOutcomeKey(rawBody: string): string | undefined {
	try {
		const job = parseJob(JSON.parse(rawBody));
		return `${job.id}:${job.status}`;
	} catch {
		return undefined;
	}
}
