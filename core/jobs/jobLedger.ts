import { OmniVideoError, RateLimitError, TransportError, isOmniVideoError } from '../errors/errors';

/**
 * What our own records say of one create, by its idempotency key: the job it made, or that it
 * was sent and nobody saw its answer (the service may or may not have made, and charged, a job).
 */
export type LedgerEntry = { jobId: string } | { sentAtMs: number };

/**
 * Our own record of the jobs a run's creates made, kept by the host where every way it runs a
 * step again reads it back (n8n: the node's execution context, which a Retry and Retry On Fail
 * carry). A create found here is never sent again: the service may ignore Idempotency-Key (its
 * spec never names the header), so asking it again could make, and charge, a second job.
 */
export interface JobLedger {
	find(idempotencyKey: string): LedgerEntry | undefined;
	note(idempotencyKey: string, entry: LedgerEntry): void;
	forget(idempotencyKey: string): void;
}

/**
 * The same records kept where several processes read and write them at once (the MCP server's
 * state folder or Redis): each step may wait on the store, and a create is sent only by the one
 * process whose `claim` noted it first.
 */
export interface SharedJobLedger {
	find(idempotencyKey: string): Promise<LedgerEntry | undefined>;
	note(idempotencyKey: string, entry: LedgerEntry): Promise<void>;
	forget(idempotencyKey: string): Promise<void>;
	/** Notes a create about to be sent when nothing is noted for its key yet; else answers what is (sent elsewhere, or its job). */
	claim(idempotencyKey: string, entry: { sentAtMs: number }): Promise<LedgerEntry | undefined>;
}

/**
 * Whether a failed create may still have made a job: an answer from the service below 500 says
 * it did not (validation, credits, limits, auth); no answer, a cut answer or a 5xx leaves it open.
 * A create refused here before it left (its turn would come too late, or it was cancelled while it
 * waited) made nothing: a create once sent is never resent, so such an error comes before any send
 * or after an answer that made nothing (a 429).
 */
export function createMayHaveMadeJob(error: unknown): boolean {
	if (error instanceof TransportError) return error.outcomeUnknown;
	if (error instanceof RateLimitError || (isOmniVideoError(error) && error.code === 'cancelled')) return false;
	if (isOmniVideoError(error)) return error.status === undefined || error.status >= 500;
	return true;
}

/** A create of this key was sent before and its outcome is unknown: nothing is sent again. */
export class CreateOutcomeUnknownError extends OmniVideoError {
	readonly kind = 'transport';
	constructor(idempotencyKey: string, sentAtMs: number) {
		super(
			`An earlier run sent this item's create at ${new Date(sentAtMs).toISOString()} and never saw the answer, so whether a ` +
				'job was made (and charged) is unknown. Nothing was sent again. Look in your Omni Video dashboard for a job created ' +
				`then; if there is one, read it with Get Job. If there is none, run the item again as a new execution.`,
			{
				idempotencyKey,
				code: 'create_outcome_unknown',
				hint: 'Check the dashboard for a job created at that time before making it again',
			},
		);
	}
}

/**
 * Another process sharing the ledger noted this create first (see SharedJobLedger.claim): that
 * process sends it and notes its job; this one sent nothing. `recorded` is what the record said.
 */
export class CreateClaimedElsewhere extends OmniVideoError {
	readonly kind = 'transport';
	constructor(
		idempotencyKey: string,
		readonly recorded: LedgerEntry,
	) {
		super('Another call is creating this same video right now; nothing was sent twice. Its job is noted as soon as the service answers it: ask again in a few seconds.', {
			idempotencyKey,
			code: 'create_claimed_elsewhere',
			hint: 'Ask again in a few seconds',
		});
	}
}
