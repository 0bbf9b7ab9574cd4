import type { Bundle, ZObject } from 'zapier-platform-core';
import { canonicalJson, derivedIdempotencyKey, keyFingerprint, type GenerateVideoInput } from '../../core';
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
 * step's whole input as mapped. The consequence, told to users in docs/zapier.md and the Run
 * Reference field: a second run with exactly the same input within 24 h gets the first run's job;
 * mapping something unique to each run (the trigger's id) into Run Reference makes each run new.
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
 * What one attempt of a create sent, kept in Zapier's cache under its idempotency key: the body
 * exactly (a replay must send the same one, although Zapier's callback URL and an uploaded file's
 * URL would differ the second time), and the job once it is known.
 */
export interface CreateAttempt {
	input: GenerateVideoInput;
	jobId?: string;
}

const cacheKey = (idempotencyKey: string) => `omni-video:create:${idempotencyKey}`;

/** The earlier attempt of this step, if any. A cache Zapier cannot reach is no reason to fail. */
export async function recallAttempt(z: ZObject, idempotencyKey: string): Promise<CreateAttempt | undefined> {
	try {
		const found = (await connectionCache(z).get(cacheKey(idempotencyKey), CONNECTION_SCOPE)) as CreateAttempt | null;
		return found && typeof found === 'object' && found.input ? found : undefined;
	} catch (error) {
		z.console.log(`Zapier's cache could not be read (${String(error)}): this step runs as a first attempt.`);
		return undefined;
	}
}

export async function recordAttempt(z: ZObject, idempotencyKey: string, attempt: CreateAttempt): Promise<void> {
	try {
		// Through JSON: the cache takes JSON values only, and fields left undefined are not.
		const value = JSON.parse(JSON.stringify(attempt)) as CreateAttempt;
		await connectionCache(z).set(cacheKey(idempotencyKey), value, ATTEMPT_MEMORY_SECONDS, CONNECTION_SCOPE);
	} catch (error) {
		z.console.log(`Zapier's cache could not be written (${String(error)}): a replay will upload and send anew.`);
	}
}

/** The create surely did not happen (refused, throttled before sending): a replay starts afresh. */
export async function forgetAttempt(z: ZObject, idempotencyKey: string): Promise<void> {
	try {
		await connectionCache(z).delete(cacheKey(idempotencyKey), CONNECTION_SCOPE);
	} catch {
		// A stale entry only means the replay resends the same body, which the service dedupes.
	}
}
