import { randomUUID } from 'node:crypto';
import { canonicalJson, derivedIdempotencyKey, type LedgerEntry } from '../../core';
import type { GenerateVideoRequest } from '../../core/types';

/** More of the same request in a day than anyone makes: past it, the last key is reused. */
const MAX_HOPS = 1000;

export interface RequestIdentity {
	idempotencyKey: string;
	/** What core's generateVideo does with an earlier job of the same key (see GenerateVideoOptions.reuse). */
	reuse: { maxAgeMs?: number };
	/** The id to pass again to pick this request up, when the agent must name it (a new video, or its own id). */
	requestId?: string;
	/** What our records hold for the key, read once here (null: nothing). */
	recorded: LedgerEntry | null;
}

/** A create's record as read: what it made or when it was sent, and when it was first noted. */
interface ReadCreate {
	entry: LedgerEntry;
	notedAtMs: number;
}

/**
 * How a retried call is told from a new request (docs/mcp.md#retries-and-new-videos):
 * - the same arguments on the same key within the retry window are a retry: the same job;
 * - `requestId` names the request: the same id and arguments are always the same job (24 h);
 * - `newVideo: true` is always a new job, under an id of its own that a later call may pass as `requestId`.
 * The key hashes the request as core will send it, so "1080p" and "1080P" are the same request.
 */
export async function requestIdentity(
	fingerprint: string,
	request: GenerateVideoRequest,
	options: { requestId?: string; newVideo?: boolean; retryWindowMs: number; read: (idempotencyKey: string) => Promise<ReadCreate | undefined>; nowMs: number },
): Promise<RequestIdentity> {
	const body = canonicalJson(request);
	if (options.requestId !== undefined) {
		const idempotencyKey = derivedIdempotencyKey('mcp', fingerprint, 'request', options.requestId, body);
		return { idempotencyKey, reuse: {}, requestId: options.requestId, recorded: (await options.read(idempotencyKey))?.entry ?? null };
	}
	if (options.newVideo) {
		const requestId = `new_${randomUUID()}`;
		return { idempotencyKey: derivedIdempotencyKey('mcp', fingerprint, 'request', requestId, body), reuse: {}, requestId, recorded: null };
	}
	// Past the window the same arguments are a new request: the next key in the chain, found in our
	// own records. The service's createdAt (core's maxAgeMs) covers records lost with a restart.
	let idempotencyKey = derivedIdempotencyKey('mcp', fingerprint, 'arguments', body);
	let recorded: ReadCreate | undefined;
	for (let hop = 0; hop < MAX_HOPS; hop++) {
		recorded = await options.read(idempotencyKey);
		if (recorded === undefined || options.nowMs - recorded.notedAtMs < options.retryWindowMs) break;
		idempotencyKey = derivedIdempotencyKey(idempotencyKey, 'later');
		recorded = undefined;
	}
	return { idempotencyKey, reuse: { maxAgeMs: options.retryWindowMs }, recorded: recorded?.entry ?? null };
}
