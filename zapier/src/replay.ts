import type { Bundle, ZObject } from 'zapier-platform-core';
import { canonicalJson, derivedIdempotencyKey, keyFingerprint, type GenerateVideoInput, type JobLedger, type LedgerEntry } from '../../core';
import { connectionBaseUrl } from './connection';
import { CONNECTION_SCOPE, connectionCache } from './cache';

/** As long as the service keeps an Idempotency-Key (24 h): after that a replay creates anew. */
const ATTEMPT_MEMORY_SECONDS = 24 * 3600;

/**
 * The Idempotency-Key of a create, the same on every replay of the step.
 *
 * What Zapier offers: `bundle.meta` of zapier-platform-core 19.1.0 names no run, step or attempt
 * (it has isLoadingSample, isBulkRead, limit, page, timezone, withSearch, paging_token and the
 * deprecated `zap.id`, which Zapier documents only for subscribe/unsubscribe), and
 * `z.generateCallbackUrl()` is new on every run. A replay, manual or automatic, runs the failed step
 * again with the input it had the first time (earlier steps' outputs are stored, not recomputed).
 * So the key is derived from what a replay keeps: the connection (its key's fingerprint), the
 * action, the Zap id when Zapier gives one, whether the editor is loading a sample, and the
 * step's whole input as mapped. What tells a new run from a replay is the step's own outcome:
 * Zapier replays only a step that errored or was halted, so an attempt whose step ended well is
 * followed by a new run (attemptFor: the next generation, a new key). Told to users in
 * docs/zapier.md and the Run Reference field, which keeps runs apart while the first still waits
 * or after its job failed.
 */
export function replaySafeKey(action: string, bundle: Bundle): string {
	const apiKey = String(bundle.authData.apiKey ?? '');
	const zapId = (bundle.meta as { zap?: { id?: unknown } } | undefined)?.zap?.id;
	return derivedIdempotencyKey(
		'zapier',
		action,
		keyFingerprint(apiKey, connectionBaseUrl(bundle.authData)),
		zapId === undefined || zapId === null ? '' : String(zapId),
		bundle.meta?.isLoadingSample ? 'sample' : 'run',
		canonicalJson(bundle.inputData),
	);
}

/**
 * What one attempt of a create sent, kept in Zapier's cache under its idempotency key before the
 * create goes out: the body, when it was sent, and the job once it is known. An entry without a job
 * is a create whose outcome is unknown (its answer was lost, or the run ended before recording it):
 * a replay never sends it again, since a service that ignores Idempotency-Key (the spec never
 * mentions one) would make and charge a second job.
 */
export interface CreateAttempt {
	input: GenerateVideoInput;
	/** ISO time the create was sent (absent in entries written before it was recorded). */
	sentAt?: string;
	jobId?: string;
	/**
	 * The step ended well with this job (returned it to Zapier). Zapier replays only a step that
	 * errored or was halted, never one that succeeded, so the same input seen again is a new run:
	 * it makes a new job (the next generation), as a new run does on n8n and Activepieces.
	 */
	delivered?: boolean;
	/** Which job of this input this is: 0 the first, 1 after a run delivered the first, and so on. */
	generation?: number;
}

/**
 * The Idempotency-Key of one generation of a step's input: the first keeps the key of
 * replaySafeKey (so attempts recorded before generations existed are still found), later ones
 * derive a new key from it, so that the service does not replay the earlier run's job.
 */
export function generationKey(baseKey: string, generation: number): string {
	return generation === 0 ? baseKey : derivedIdempotencyKey(baseKey, 'generation', generation);
}

/**
 * What this run of the step has to do with its input: the attempt a replay continues (with its
 * key), or a first attempt of a new generation when there is none or the last one was delivered.
 */
export function attemptFor(baseKey: string, earlier: CreateAttempt | undefined): { idempotencyKey: string; generation: number; earlier?: CreateAttempt } {
	const generation = earlier?.generation ?? 0;
	if (earlier && !earlier.delivered) return { idempotencyKey: generationKey(baseKey, generation), generation, earlier };
	const next = earlier ? generation + 1 : 0;
	return { idempotencyKey: generationKey(baseKey, next), generation: next };
}

/** Attempts are kept by the input's base key (replaySafeKey), one record for every generation. */
const cacheKey = (baseKey: string) => `omni-video:create:${baseKey}`;

/** The earlier attempt of this step, if any. A cache Zapier cannot reach is no reason to fail. */
export async function recallAttempt(z: ZObject, baseKey: string): Promise<CreateAttempt | undefined> {
	try {
		const found = (await connectionCache(z).get(cacheKey(baseKey), CONNECTION_SCOPE)) as CreateAttempt | null;
		return found && typeof found === 'object' && found.input ? found : undefined;
	} catch (error) {
		z.console.log(`Zapier's cache could not be read (${String(error)}): this step runs as a first attempt.`);
		return undefined;
	}
}

async function recordAttempt(z: ZObject, baseKey: string, attempt: CreateAttempt): Promise<void> {
	try {
		// Through JSON: the cache takes JSON values only, and fields left undefined are not.
		const value = JSON.parse(JSON.stringify(attempt)) as CreateAttempt;
		await connectionCache(z).set(cacheKey(baseKey), value, ATTEMPT_MEMORY_SECONDS, CONNECTION_SCOPE);
	} catch (error) {
		z.console.log(`Zapier's cache could not be written (${String(error)}): a replay will upload and send anew.`);
	}
}

/**
 * The step returned this attempt's job to Zapier: the next time this input comes, it is a new run.
 * Written last, just before the step returns; a cache that cannot be written leaves the attempt
 * undelivered, so the next run gets this job again (safe for money, as before generations).
 */
export async function markDelivered(z: ZObject, baseKey: string, attempt: CreateAttempt): Promise<void> {
	await recordAttempt(z, baseKey, { ...attempt, delivered: true });
}

/**
 * The create surely did not happen (refused, throttled before sending): a replay starts afresh. A
 * later generation goes back to "the one before was delivered", not to nothing: a first
 * generation's key would get the earlier run's job replayed on a service that honours keys.
 */
async function forgetAttempt(z: ZObject, baseKey: string, attempt: CreateAttempt): Promise<void> {
	const generation = attempt.generation ?? 0;
	if (generation > 0) {
		await recordAttempt(z, baseKey, { input: attempt.input, generation: generation - 1, delivered: true });
		return;
	}
	try {
		await connectionCache(z).delete(cacheKey(baseKey), CONNECTION_SCOPE);
	} catch (error) {
		// A stale entry makes the replay report an unknown outcome and send nothing: safe, if unhelpful.
		z.console.log(`Zapier's cache could not be cleared (${String(error)}): a replay will report this create's outcome as unknown.`);
	}
}

/** What our records say of an attempt's create, for core (see LedgerEntry): its job, or that it was sent. */
export function attemptEntry(attempt: CreateAttempt): LedgerEntry | undefined {
	if (attempt.jobId) return { jobId: attempt.jobId };
	// Sent (an undelivered attempt is written as its create goes out), when it does not say when: long ago.
	return attempt.delivered ? undefined : { sentAtMs: attempt.sentAt ? Date.parse(attempt.sentAt) : 0 };
}

/**
 * core's JobLedger for the create of one generation of a step's input (see attemptFor), over the
 * attempt record of its base key in Zapier's cache. A create claimed is written as sent with its
 * input and generation (what a replay and the outcome-unknown message need), then with its job;
 * one refused with an answer is forgotten (forgetAttempt); one that lost its answer stays written
 * as sent, which a replay reads as an outcome unknown. A cache that cannot be read or written is
 * no reason to fail: nothing is recorded then, as before.
 */
export interface AttemptLedger extends JobLedger {
	/** The attempt as last read or written here (from `recalled` on). */
	attempt?: CreateAttempt;
	/** The attempt whose create this step sent and never saw answered, if it did. */
	answerLostFor?: CreateAttempt;
}

export function attemptLedger(z: ZObject, baseKey: string, sending: { input: GenerateVideoInput; generation: number }, recalled: CreateAttempt | undefined): AttemptLedger {
	const write = async (next: CreateAttempt) => {
		ledger.attempt = next;
		await recordAttempt(z, baseKey, next);
	};
	const ledger: AttemptLedger = {
		attempt: recalled,
		async find(idempotencyKey) {
			const found = await recallAttempt(z, baseKey);
			if (!found || generationKey(baseKey, found.generation ?? 0) !== idempotencyKey) return undefined;
			ledger.attempt = found;
			return attemptEntry(found);
		},
		async claim(idempotencyKey, { sentAtMs }) {
			const known = await ledger.find(idempotencyKey);
			if (!known) await write({ ...sending, sentAt: new Date(sentAtMs).toISOString() });
			return known;
		},
		async note(_idempotencyKey, entry) {
			const known = ledger.attempt ?? sending;
			await write('jobId' in entry ? { ...known, jobId: entry.jobId } : { ...known, sentAt: new Date(entry.sentAtMs).toISOString() });
		},
		async forget() {
			ledger.attempt = undefined;
			await forgetAttempt(z, baseKey, sending);
		},
		async answerLost() {
			ledger.answerLostFor = ledger.attempt;
		},
	};
	return ledger;
}

/** How much of the prompt an error quotes: enough to find the job in the account's history. */
const QUOTED_PROMPT_CHARS = 80;

function quotedPrompt(prompt: string): string {
	const oneLine = prompt.replace(/\s+/g, ' ').trim();
	return JSON.stringify(oneLine.length > QUOTED_PROMPT_CHARS ? `${oneLine.slice(0, QUOTED_PROMPT_CHARS - 1)}…` : oneLine);
}

/**
 * What the user is told when a create's outcome is unknown, on the attempt that lost the answer
 * and on every replay of it: what happened, that nothing is sent again, and what to check (the
 * time, the prompt, the idempotency key) and do next.
 */
export function outcomeUnknownMessage(
	happened: string,
	attempt: { input: GenerateVideoInput; sentAt?: string },
	idempotencyKey: string,
	replay: boolean,
): string {
	const when = attempt.sentAt ? ` at ${attempt.sentAt}` : '';
	const lead = replay ? `An earlier attempt of this step sent its create${when} and got no clear answer, so Omni Video may have made (and charged) that job. ` : `${happened} Omni Video may have made (and charged) the job. `;
	return (
		lead +
		'Nothing is sent again for this step, so no second job is paid for: a replay (or autoreplay) reports the same. ' +
		`Look in your Omni Video account for a job created${when} with the prompt ${quotedPrompt(attempt.input.prompt)} ` +
		`(idempotency key ${idempotencyKey}). If it is there, read it with a Find Job step and its job id; ` +
		'if not, run the Zap again with something new in Run Reference.'
	);
}
