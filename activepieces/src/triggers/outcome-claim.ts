/* eslint-disable @n8n/community-nodes/no-restricted-globals -- the Activepieces piece: its waits are the piece's own, not n8n's */
import { randomUUID } from 'node:crypto';
import type { Store } from '@activepieces/pieces-framework';

/**
 * One delivery at a time per claimed outcome, across engine processes. Activepieces runs each
 * webhook in its own engine process, and its store has no compare-and-set: a plain "get, then
 * put" lets two copies arriving together both read "not seen" and both start the flow. This is
 * Fischer's timed mutual exclusion over the store's get and put: a copy that finds no live claim
 * writes its own, waits longer than any claim's write may take, and goes on only if its claim is
 * still the one stored. A copy whose own read-to-write took longer than that bound does not go
 * on (that bound is what makes the wait long enough). Others wait for the holder's verdict: its
 * outcome marked seen (a duplicate), or its claim released or expired (they try again).
 */
export const CLAIM_TIMING = {
	/** The longest a claim's read-then-write may take for the claim to count. */
	writeBoundMs: 1_000,
	/** How long a claimant waits after writing before it checks that its claim stands. */
	settleMs: 1_500,
	/** A holder that died (its process killed) stops blocking others after this long. */
	leaseMs: 30_000,
	/** How often a waiting copy looks again. */
	pollMs: 200,
};

interface Claim {
	token: string;
	atMs: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export type ClaimResult<T> = { duplicate: true } | { duplicate: false; taken: boolean; value: T };

/**
 * Runs `decide` for the first copy of an outcome: it returns whether the outcome was taken (then
 * `seenKey` is marked, before the claim is released). Copies of a taken outcome get `duplicate`.
 */
export async function claimOutcome<T>(
	store: Store,
	keys: { claimKey: string; seenKey: string },
	decide: () => Promise<{ taken: boolean; value: T }>,
): Promise<ClaimResult<T>> {
	const token = randomUUID();
	const giveUpAt = Date.now() + CLAIM_TIMING.leaseMs * 2;
	for (;;) {
		if (Date.now() > giveUpAt) throw new Error(`Omni Video callback not taken: the flow's store did not let this delivery claim ${keys.claimKey} within ${(CLAIM_TIMING.leaseMs * 2) / 1000} s. Look the job up with Get Job.`);
		if (await store.get(keys.seenKey)) return { duplicate: true };
		const readAt = Date.now();
		const held = await store.get<Claim>(keys.claimKey);
		if (held && held.token !== token && readAt - held.atMs < CLAIM_TIMING.leaseMs && Date.now() < giveUpAt) {
			await sleep(CLAIM_TIMING.pollMs);
			continue;
		}
		await store.put<Claim>(keys.claimKey, { token, atMs: Date.now() });
		const wroteInTime = Date.now() - readAt <= CLAIM_TIMING.writeBoundMs;
		await sleep(CLAIM_TIMING.settleMs);
		const standing = await store.get<Claim>(keys.claimKey);
		if (!wroteInTime || standing?.token !== token) {
			if (standing?.token === token) await store.delete(keys.claimKey);
			continue;
		}
		try {
			// Another copy may have finished between the first look and this claim.
			if (await store.get(keys.seenKey)) return { duplicate: true };
			const { taken, value } = await decide();
			if (taken) await store.put(keys.seenKey, true);
			return { duplicate: false, taken, value };
		} finally {
			const still = await store.get<Claim>(keys.claimKey).catch(() => null);
			if (still?.token === token) await store.delete(keys.claimKey).catch(() => undefined);
		}
	}
}
