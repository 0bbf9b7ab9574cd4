import type { ZObject } from 'zapier-platform-core';
import { AuthError, OmniVideoError, RateLimitError, unsaidDetails } from '../../core';

/** Zapier's ThrottledError carries its message and delay as JSON in `message`. */
function throttledDelaySeconds(error: Error): number | undefined {
	try {
		const delay = (JSON.parse(error.message) as { delay?: unknown }).delay;
		return typeof delay === 'number' ? delay : undefined;
	} catch {
		return undefined;
	}
}

function rateLimitMessage(seconds: number | undefined, local = false): string {
	const when = seconds ? `in ${seconds} s` : 'shortly';
	const what = local
		? "Your Omni Video plan's limits for this key (requests per minute and hour, jobs at once) leave no room for this step before Zapier's time runs out, so nothing was sent."
		: "Omni Video's request limit for your plan is reached for now; nothing was created.";
	return `${what} Zapier runs this step again ${when}.`;
}

/** The message with the job id, when the error concerns a job and does not say which. */
function withJobId(error: OmniVideoError): string {
	const { hint, jobId } = unsaidDetails(error);
	return [error.message, hint, jobId && `(job ${jobId})`].filter(Boolean).join(' ');
}

/** What happened, without core's advice (the app words its own). */
export function happenedOnly(error: OmniVideoError): string {
	return error.hint ? error.message.replace(error.hint, '').trim() : error.message.split('. ')[0] + '.';
}

/** Errors the app words itself: they reach Zapier as they are. */
const worded = new WeakSet<Error>();

/** A plain app error the app wrote: shown as it is, with its code. */
export function appError(z: ZObject, message: string, code: string): Error {
	const error = new z.errors.Error(message, code);
	worded.add(error);
	return error;
}

/** A ThrottledError whose message the app wrote (not a 429 that Zapier's middleware turned into one). */
export function appThrottle(z: ZObject, message: string, delaySeconds: number): Error {
	const error = new z.errors.ThrottledError(message, delaySeconds);
	worded.add(error);
	return error;
}

/**
 * What a Zap shows for an error of core: 429s, and waits our own limiter would need past the
 * step's deadline, become ThrottledError (Zapier runs the step again after the real delay; nothing
 * was sent), a refused key an auth error (Zapier asks to reconnect), the rest a plain app error
 * that names the job and is not retried (403, 402, failed jobs, bad input).
 */
export function zapierError(z: ZObject, error: unknown): unknown {
	if (error instanceof Error && worded.has(error)) return error;
	if (error instanceof Error && error.name === 'ThrottledError') {
		const delay = throttledDelaySeconds(error);
		return new z.errors.ThrottledError(rateLimitMessage(delay), delay);
	}
	if (error instanceof RateLimitError) {
		const delay = error.retryAfterMs === undefined ? undefined : Math.ceil(error.retryAfterMs / 1000);
		return new z.errors.ThrottledError(rateLimitMessage(delay, error.code === 'rate_limited_locally'), delay);
	}
	// 401: reconnecting with a good key helps; 403 (a plan without API access): it cannot.
	if (error instanceof AuthError && error.status !== 403) return new z.errors.ExpiredAuthError(withJobId(error));
	if (error instanceof OmniVideoError) return new z.errors.Error(withJobId(error), error.code ?? error.kind, error.status);
	return error;
}

/** Runs an operation and turns whatever core throws into what Zapier shows. */
export async function asZapierErrors<T>(z: ZObject, work: () => Promise<T>): Promise<T> {
	try {
		return await work();
	} catch (error) {
		throw zapierError(z, error);
	}
}
