import { OmniVideoError, RateLimitError, TransportError, isOmniVideoError } from '../errors/errors';

/**
 * What our own records say of one create, by its idempotency key: the job it made, or that it
 * was sent and nobody saw its answer yet (the service may or may not have made, and charged, a
 * job). `pending`: the caller that sent it is alive and its answer may still come (a shared
 * ledger's reading, never stored).
 */
export type LedgerEntry = { jobId: string } | { sentAtMs: number; pending?: boolean };

/**
 * Our own record of the jobs creates made, kept where every way a host runs a step again reads it
 * back (n8n: the node's execution context, which a Retry and Retry On Fail carry; the MCP server:
 * its records folder or Redis, shared by its processes). A create found here is never sent again:
 * the service may ignore Idempotency-Key (its spec never names the header), so asking it again
 * could make, and charge, a second job. One interface for every host: a host's synchronous records
 * come in through hostLedger.
 */
export interface JobLedger {
	find(idempotencyKey: string): Promise<LedgerEntry | undefined>;
	/** Notes a create about to be sent when nothing is noted for its key yet; else answers what is (sent by another caller, or its job). */
	claim(idempotencyKey: string, entry: { sentAtMs: number }): Promise<LedgerEntry | undefined>;
	/** Notes the job the create made, or that it is sent again (after a refusal for a place). */
	note(idempotencyKey: string, entry: LedgerEntry): Promise<void>;
	/** The create was refused with an answer (nothing made): the key is free to send again. */
	forget(idempotencyKey: string): Promise<void>;
	/** The create this caller sent will never be answered to it: a caller asked again is told its outcome is unknown, not to wait. */
	answerLost(idempotencyKey: string): Promise<void>;
}

/** A host's own records of its creates, read and written in place (n8n's execution data). */
export interface HostJobRecords {
	find(idempotencyKey: string): LedgerEntry | undefined;
	note(idempotencyKey: string, entry: LedgerEntry): void;
	forget(idempotencyKey: string): void;
}

/**
 * A host's records as the ledger: each step done at once, in place (a claim is one step, as nothing
 * else writes them meanwhile); a create that lost its answer stays noted as sent, which the next
 * attempt reads as an outcome unknown.
 */
export function hostLedger(records: HostJobRecords): JobLedger {
	return {
		find: async (idempotencyKey) => records.find(idempotencyKey),
		claim: async (idempotencyKey, entry) => {
			const known = records.find(idempotencyKey);
			if (known) return known;
			records.note(idempotencyKey, entry);
			return undefined;
		},
		note: async (idempotencyKey, entry) => records.note(idempotencyKey, entry),
		forget: async (idempotencyKey) => records.forget(idempotencyKey),
		answerLost: async () => undefined,
	};
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
 * Another caller is sending this same create and its answer may still come (see JobLedger.claim):
 * for a host that asks generateVideo for a job, not an outcome (createVideoOnce answers it as
 * 'being made elsewhere').
 */
export class CreateClaimedElsewhere extends OmniVideoError {
	readonly kind = 'transport';
	constructor(idempotencyKey: string) {
		super('Another call is creating this same video right now; nothing was sent twice. Its job is noted as soon as the service answers it: ask again in a few seconds.', {
			idempotencyKey,
			code: 'create_claimed_elsewhere',
			hint: 'Ask again in a few seconds',
		});
	}
}
