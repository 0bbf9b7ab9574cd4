import { recordStep } from './state/recordStep';
import type { StateStore } from './state/store';

/** A cancellation is kept this long: far past any call it could still stop. */
const KEEP_MS = 15 * 60_000;
/** How often a process with calls that may be cancelled elsewhere reads the records. */
const READ_MS = 500;

const cancelRecordName = (callId: string) => `cancel:${callId}`;

/** Notes that the call was cancelled (a record of its own, gone once no call could need it). */
const noteCancel = recordStep<null, void>('note cancel', (_values, _args, nowMs) => ({ writes: [{ value: { atMs: nowMs }, expiresAtMs: nowMs + KEEP_MS }], answer: undefined }), `save(1, { atMs = now }, now + ${KEEP_MS})
return nil`);

/**
 * Cancellations that reach another process than the call's. A 2025 client cancels over HTTP with
 * a `notifications/cancelled` request of its own, and without sessions a proxy may send it to any
 * replica: the replica that gets it notes it in the shared records, and the one running the call
 * reads them while it runs. A call id names the key, the client's connection and its request, so
 * that one client cannot stop another's call. A cancellation heard by the process running the call
 * stops it at once.
 */
export class CallCancels {
	private readonly running = new Map<string, AbortController>();
	private timer: NodeJS.Timeout | undefined;

	constructor(
		private readonly store: StateStore,
		private readonly now: () => number,
	) {}

	/** A signal that aborts when the call is cancelled anywhere; end() when the call is over. */
	follow(callId: string): { signal: AbortSignal; end(): void } {
		const controller = new AbortController();
		this.running.set(callId, controller);
		this.timer ??= setInterval(() => void this.readCancels(), READ_MS).unref();
		void this.readCancels();
		return {
			signal: controller.signal,
			end: () => {
				if (this.running.get(callId) === controller) this.running.delete(callId);
				if (this.running.size === 0 && this.timer) {
					clearInterval(this.timer);
					this.timer = undefined;
				}
			},
		};
	}

	/** Stops the call, here if it runs here, else wherever it runs (through the records). */
	async cancel(callId: string): Promise<void> {
		const here = this.running.get(callId);
		if (here) return here.abort();
		await this.store.run(noteCancel, [cancelRecordName(callId)], null, this.now());
	}

	private async readCancels(): Promise<void> {
		if (this.running.size === 0) return;
		// Records out of reach: the call runs to its bound, as it would have without the cancellation.
		await Promise.all(
			[...this.running].map(async ([callId, controller]) => {
				if ((await this.store.get(cancelRecordName(callId)).catch(() => undefined)) !== undefined) controller.abort();
			}),
		);
	}
}

/**
 * The id a 2025 client's call is known by across processes: the key's fingerprint, the session id
 * the client was given at its initialize and sends with every request, and the request's id.
 */
export function legacyCallId(fingerprint: string, sessionId: string, requestId: string | number): string {
	return `${fingerprint}|${sessionId}|${String(requestId)}`;
}
