import type { Store } from '@activepieces/pieces-framework';
import { createMayHaveMadeJob, type GenerateVideoInput, type OmniVideoClient } from '../../../core';

/**
 * What one run of the step sent, kept in the flow's store under its idempotency key: a retry of
 * the step must send the same body (the same callback URL) or none at all, and the resumed step
 * must know its job. `sentAtMs` is set before the create goes out and `jobId` once it is known:
 * a record with the one and not the other is a create whose outcome is unknown, never sent again.
 * It stays after the step's output is made, for as long as the key lasts (stepRecords.ts).
 */
export interface Attempt {
	callbackUrl?: string;
	waitpointId?: string;
	jobId?: string;
	sentAtMs?: number;
	/** Why the step polls although Callback was asked for (the service refused the resume URL). */
	callbackSkipped?: string;
}

type Created = Awaited<ReturnType<OmniVideoClient['generateVideo']>>;
type CreateOptions = Parameters<OmniVideoClient['generateVideo']>[1];

/** What the step says when it cannot know whether its create made a job, and will not send it again. */
export function outcomeUnknownError(idempotencyKey: string, sentAtMs: number, cause?: unknown): Error {
	const what = cause instanceof Error ? `${cause.message.split('. ')[0].replace(/\.$/, '')}. ` : '';
	return new Error(
		`${what}Omni Video may have created this step's job (its create was sent at ${new Date(sentAtMs).toISOString()} with idempotency key ${idempotencyKey}, ` +
			'and no answer named a job). It is not sent again, so that a video is never paid for twice: look for the job in your Omni Video dashboard ' +
			'and read it with Get Job, or run the flow again to make a new one.',
	);
}

/**
 * Sends the step's create once: the record says it was sent before it goes, and names its job
 * after. A create refused before it could make anything (bad input, limits, a refused
 * connection) leaves the record as it was before, and may be sent again; one whose outcome is
 * unknown (no answer, 5xx) is never sent again (outcomeUnknownError).
 */
export async function createOnce(
	store: Store,
	storeKey: string,
	client: OmniVideoClient,
	attempt: Attempt,
	input: GenerateVideoInput,
	options: CreateOptions,
): Promise<Created> {
	const sentAtMs = Date.now();
	await store.put(storeKey, { ...attempt, sentAtMs });
	let created: Created;
	try {
		created = await client.generateVideo({ ...input, callbackUrl: attempt.callbackUrl }, options);
	} catch (error) {
		if (createMayHaveMadeJob(error)) throw outcomeUnknownError(String(options?.idempotencyKey), sentAtMs, error);
		await store.put(storeKey, attempt);
		throw error;
	}
	try {
		await store.put(storeKey, { ...attempt, sentAtMs, jobId: created.job.id });
	} catch (error) {
		// The job is made and paid for, but the record that names it is not kept: the step cannot
		// go on (a resume or a retry would not know the job), and nothing may send the create again.
		const why = error instanceof Error ? error.message : String(error);
		throw new Error(
			`Omni Video made job ${created.job.id}, but the flow's store did not keep this step's record of it (${why}). ` +
				'The create is not sent again, so that the video is not paid for twice: read the job with Get Job.',
		);
	}
	return created;
}

/** The step's output says why it polled when Callback was asked for. */
export function skipped(attempt: Attempt): Record<string, unknown> {
	return attempt.callbackSkipped ? { callbackSkipped: attempt.callbackSkipped } : {};
}
