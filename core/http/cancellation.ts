import type { AbortSignalLike, Sleep } from './transport';
import { TimeoutError } from '../errors/errors';
import { settle } from '../settle';

/** The error every cancelled wait ends in; with a job id it says how to pick the job up later. */
export function cancelledError(what: string, jobId?: string): TimeoutError {
	const later = jobId ? ` The job goes on: look it up later with Get Job (job id ${jobId}).` : '';
	return new TimeoutError(`${what} was cancelled.${later}`, { code: 'cancelled', jobId });
}

export function throwIfAborted(signal: AbortSignalLike | undefined, what: string, jobId?: string): void {
	if (signal?.aborted) throw cancelledError(what, jobId);
}

/** Sleeps through the host's sleep; a cancel surfaces as our TimeoutError, whatever it rejects with. */
export async function sleepUnlessCancelled(
	sleep: Sleep,
	ms: number,
	signal: AbortSignalLike | undefined,
	what: string,
	jobId?: string,
): Promise<void> {
	throwIfAborted(signal, what, jobId);
	if (ms <= 0) return;
	const slept = await settle(sleep(ms, signal));
	throwIfAborted(signal, what, jobId);
	if (!slept.ok) throw slept.error;
}
