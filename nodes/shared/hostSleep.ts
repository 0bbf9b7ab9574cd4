import { sleep } from 'n8n-workflow';

/**
 * n8n-workflow's `sleep`, the one timer n8n lets a community node use (setTimeout is a restricted
 * global). It is exported by every supported n8n-workflow, unlike `sleepWithAbort`, which 2.34
 * dropped (docs/n8n-internals.md). From 2.34 `sleep` takes an abort signal itself and clears its
 * timer; before, it takes only the time and ignores a second argument. Typed here as the newer
 * signature, which the older one accepts at run time.
 */
const hostTimer = sleep as (ms: number, signal?: AbortSignal) => Promise<void>;

function abortReason(signal: AbortSignal): Error {
	return signal.reason instanceof Error ? signal.reason : new Error('The operation was aborted');
}

/**
 * Waits `ms`, or rejects as soon as `signal` aborts, on every supported n8n: where the host's
 * sleep ignores the signal, its timer runs out on its own later and resolves nothing.
 */
export function hostSleep(ms: number, signal?: AbortSignal): Promise<void> {
	if (!signal) return hostTimer(ms);
	if (signal.aborted) return Promise.reject(abortReason(signal));
	return new Promise<void>((resolve, reject) => {
		const onAbort = () => reject(abortReason(signal));
		signal.addEventListener('abort', onAbort, { once: true });
		hostTimer(ms, signal).then(
			() => {
				signal.removeEventListener('abort', onAbort);
				resolve();
			},
			(error: unknown) => {
				signal.removeEventListener('abort', onAbort);
				reject(error instanceof Error ? error : abortReason(signal));
			},
		);
	});
}
