import type { Store } from '@activepieces/pieces-framework';
import type { JobLedger, LedgerEntry } from '../../../core';

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

/** What the step's record says of its create, in core's terms (see LedgerEntry). */
export function entryOf(attempt: Attempt | undefined): LedgerEntry | undefined {
	if (attempt?.jobId) return { jobId: attempt.jobId };
	if (attempt?.sentAtMs !== undefined) return { sentAtMs: attempt.sentAtMs };
	return undefined;
}

/** The step's record as core's JobLedger, and when the create this run sent lost its answer. */
export interface StepLedger extends JobLedger {
	/** When this run's create was sent, if it was never answered (core's answerLost): its outcome is unknown. */
	readonly answerLostAtMs: number | undefined;
}

/**
 * The step's record of its create (one key's) as core's JobLedger, its own fields kept: claimed
 * before the create goes out, named with its job after, put back as it was when the create is
 * refused with an answer (nothing made: it may be sent again). Nothing else writes the record
 * while the step runs (the store has no compare-and-set), so the record read is the one answered.
 */
export function stepLedger(store: Store, storeKey: string, attempt: Attempt): StepLedger {
	let record = attempt;
	let answerLostAtMs: number | undefined;
	const put = async (next: Attempt) => {
		await store.put(storeKey, next);
		record = next;
	};
	return {
		get answerLostAtMs() {
			return answerLostAtMs;
		},
		find: async () => entryOf(record),
		claim: async (_key, { sentAtMs }) => {
			const known = entryOf(record);
			if (!known) await put({ ...record, sentAtMs });
			return known;
		},
		note: async (_key, entry) => {
			// Sent again after a refusal for a place: noted as sent anew.
			if (!('jobId' in entry)) {
				await put({ ...record, sentAtMs: entry.sentAtMs });
				return;
			}
			try {
				await put({ ...record, jobId: entry.jobId });
			} catch (error) {
				// The job is made and paid for, but the record that names it is not kept: the step cannot
				// go on (a resume or a retry would not know the job), and nothing may send the create again.
				const why = error instanceof Error ? error.message : String(error);
				throw new Error(
					`Omni Video made job ${entry.jobId}, but the flow's store did not keep this step's record of it (${why}). ` +
						'The create is not sent again, so that the video is not paid for twice: read the job with Get Job.',
				);
			}
		},
		forget: async () => {
			const unsent = { ...record };
			delete unsent.sentAtMs;
			await put(unsent);
		},
		// The record keeps its sentAtMs: the step run again finds its outcome unknown.
		answerLost: async () => {
			answerLostAtMs = record.sentAtMs;
		},
	};
}

/** What the step says when it cannot know whether its create made a job, and will not send it again. */
export function outcomeUnknownError(idempotencyKey: string, sentAtMs: number, cause?: unknown): Error {
	const what = cause instanceof Error ? `${cause.message.split('. ')[0].replace(/\.$/, '')}. ` : '';
	return new Error(
		`${what}Omni Video may have created this step's job (its create was sent at ${new Date(sentAtMs).toISOString()} with idempotency key ${idempotencyKey}, ` +
			'and no answer named a job). It is not sent again, so that a video is never paid for twice: look for the job in your Omni Video dashboard ' +
			'and read it with Get Job, or run the flow again to make a new one.',
	);
}

/** The step's output says why it polled when Callback was asked for. */
export function skipped(attempt: Attempt): Record<string, unknown> {
	return attempt.callbackSkipped ? { callbackSkipped: attempt.callbackSkipped } : {};
}
