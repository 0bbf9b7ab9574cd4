/* eslint-disable @n8n/community-nodes/no-restricted-imports -- the Zapier app: n8n's rules for community nodes do not apply to it */
import type { ZObject } from 'zapier-platform-core';
import { AuthError, OmniVideoError, RateLimitError } from '../../core';

/** Zapier's ThrottledError carries its message and delay as JSON in `message`. */
function throttledDelaySeconds(error: Error): number | undefined {
	try {
		const delay = (JSON.parse(error.message) as { delay?: unknown }).delay;
		return typeof delay === 'number' ? delay : undefined;
	} catch {
		return undefined;
	}
}

function rateLimitMessage(seconds: number | undefined): string {
	const when = seconds ? `in ${seconds} s` : 'shortly';
	return `Omni Video's request limit for your plan is reached for now. Zapier runs this step again ${when}; nothing was created twice.`;
}

/** The message with the job id, when the error concerns a job and does not say which. */
function withJobId(error: OmniVideoError): string {
	const parts = [error.message];
	if (error.hint && !error.message.includes(error.hint)) parts.push(error.hint);
	if (error.jobId && !error.message.includes(error.jobId)) parts.push(`(job ${error.jobId})`);
	return parts.join(' ');
}

/**
 * What a Zap shows for an error of core: 429s become ThrottledError (Zapier retries after the
 * server's delay), a refused key an auth error (Zapier asks to reconnect), the rest a plain app
 * error that names the job and is not retried (402, failed jobs, bad input).
 */
export function zapierError(z: ZObject, error: unknown): unknown {
	if (error instanceof Error && error.name === 'ThrottledError') {
		const delay = throttledDelaySeconds(error);
		return new z.errors.ThrottledError(rateLimitMessage(delay), delay);
	}
	if (error instanceof RateLimitError) {
		const delay = error.retryAfterMs === undefined ? undefined : Math.ceil(error.retryAfterMs / 1000);
		return new z.errors.ThrottledError(rateLimitMessage(delay), delay);
	}
	if (error instanceof AuthError) return new z.errors.ExpiredAuthError(withJobId(error));
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
