import type { ApiRuntime } from '../http/apiRequest';
import type { JobRecord } from '../types';
import { parseJob } from '../answers/parseJob';
import { verifyWebhookSignature } from './signature';
import { getJob } from '../jobs/getJob';
import { isTerminal } from '../jobs/jobOutcome';
import { jobSeenEnded } from '../pacing/endedJobs';
import { NotFoundError, RateLimitError, isOmniVideoError } from '../errors/errors';
import { settle } from '../settle';

export interface CallbackRequest {
	headers: Record<string, string | string[] | undefined>;
	/** The body exactly as received: signatures are computed over these bytes. */
	rawBody: string;
	/** The `whsec_…` secret, when the credential has one: then only signed callbacks count. */
	secret?: string;
	/** Re-read the job even when the signature holds (some adapters always confirm). */
	alwaysConfirm?: boolean;
	/**
	 * A delivery whose signature is right but older than the tolerance is confirmed by looking the
	 * job up instead of refused. For hosts that answer the service before the work runs (a queue
	 * backlog can hold a callback past 300 s, and the service, already answered, never sends it
	 * again): refusing it would lose the job's outcome for good. A lookup is as strong as a
	 * signature, so a replayed old delivery only ever starts work for a job that really ended.
	 */
	confirmStaleByLookup?: boolean;
	/**
	 * The host's own check that the job a callback names may be one it waits for, made before
	 * anything is sent: an unsigned callback naming any other job (forged, or meant for someone
	 * else) is refused without spending a lookup on the user's key.
	 */
	expects?: (jobId: string) => boolean;
}

export type CallbackOutcome =
	| {
			accepted: true;
			job: JobRecord;
			/** How we know the job is real: a valid signature, or a lookup with our own key. */
			confirmedBy: 'signature' | 'lookup';
			/** Same for every delivery of one event: use it to ignore duplicates. */
			deliveryId: string;
	  }
	| {
			accepted: false;
			/** HTTP status to answer the caller with. */
			status: 400 | 401 | 404 | 409 | 503;
			reason: string;
			jobId?: string;
			/** With 503: when the service should deliver again (Retry-After, in seconds). */
			retryAfterSeconds?: number;
	  };

/**
 * The service waits 15 s for a callback's answer, then delivers again. A confirming lookup that
 * cannot be answered well inside that (the key's windows are spent, the API is slow) is not held:
 * the callback is answered 503 with Retry-After and the service's retry brings it back.
 */
export const CALLBACK_LOOKUP_BUDGET_MS = 2_000;
/** When a confirming lookup failed for another reason than the plan's limits. */
const RETRY_CALLBACK_AFTER_S = 30;

/**
 * Decides whether a callback may start work. A callback is a signal, not the truth: unless its
 * Standard Webhooks signature verifies, the job is re-read with our own key and only that answer
 * counts, so forged callbacks never produce a result.
 */
export async function handleCallback(
	runtime: ApiRuntime,
	request: CallbackRequest,
): Promise<CallbackOutcome> {
	let claimed: JobRecord;
	try {
		claimed = parseJob(JSON.parse(request.rawBody));
	} catch {
		return { accepted: false, status: 400, reason: 'The callback body is not an Omni Video job.' };
	}
	if (request.expects && !request.expects(claimed.id)) {
		return { accepted: false, status: 404, reason: `Job ${claimed.id} is not one this callback URL waits for.`, jobId: claimed.id };
	}
	let job = claimed;
	let confirmedBy: 'signature' | 'lookup' = 'lookup';
	let deliveryId: string | undefined;
	if (request.secret) {
		const check = verifyWebhookSignature({
			secret: request.secret,
			headers: request.headers,
			rawBody: request.rawBody,
			nowMs: runtime.clock.now(),
		});
		const stale = !check.ok && request.confirmStaleByLookup && isStaleButSigned(request, runtime.clock.now());
		if (!check.ok && !stale) {
			return {
				accepted: false,
				status: 401,
				reason: `Signature rejected: ${check.reason}`,
				jobId: claimed.id,
			};
		}
		if (check.ok) {
			confirmedBy = 'signature';
			deliveryId = check.webhookId;
		}
	}
	if (!request.secret || request.alwaysConfirm || confirmedBy !== 'signature') {
		const lookup = await settle(
			getJob(runtime, claimed.id, {
				priority: 'urgent',
				deadlineAtMs: runtime.clock.now() + CALLBACK_LOOKUP_BUDGET_MS,
			}),
		);
		if (!lookup.ok) {
			if (lookup.error instanceof NotFoundError) {
				return {
					accepted: false,
					status: 404,
					reason: `No job ${claimed.id} exists for this API key's account.`,
					jobId: claimed.id,
				};
			}
			return confirmLater(lookup.error, claimed.id);
		}
		job = lookup.value;
		confirmedBy = 'lookup';
	}
	if (!isTerminal(job)) {
		return {
			accepted: false,
			status: 409,
			reason: `Job ${job.id} is still ${job.rawStatus || 'running'}; the callback is premature.`,
			jobId: job.id,
		};
	}
	jobSeenEnded(runtime, job);
	return { accepted: true, job, confirmedBy, deliveryId: deliveryId ?? `${job.id}:${job.status}` };
}

/** Signed with the secret, only older than the tolerance allows (the age is the only fault). */
function isStaleButSigned(request: CallbackRequest, nowMs: number): boolean {
	const secret = request.secret ?? '';
	const anyAge = verifyWebhookSignature({ secret, headers: request.headers, rawBody: request.rawBody, nowMs, toleranceSeconds: Number.MAX_SAFE_INTEGER });
	return anyAge.ok && !verifyWebhookSignature({ secret, headers: request.headers, rawBody: request.rawBody, nowMs }).ok;
}

/** The job could not be confirmed in time: the service is asked to deliver again later. */
function confirmLater(error: unknown, jobId: string): CallbackOutcome {
	if (!isOmniVideoError(error)) throw error;
	const retryAfterSeconds =
		error instanceof RateLimitError && error.retryAfterMs !== undefined
			? Math.max(1, Math.ceil(error.retryAfterMs / 1000))
			: RETRY_CALLBACK_AFTER_S;
	return {
		accepted: false,
		status: 503,
		reason: `Job ${jobId} could not be confirmed in time (${error.message}). Deliver again in ${retryAfterSeconds} s.`,
		jobId,
		retryAfterSeconds,
	};
}
