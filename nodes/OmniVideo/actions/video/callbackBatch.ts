import type { IDataObject } from 'n8n-workflow';

/**
 * What a parked Generate node must remember until its callbacks come: each item's job id, or why
 * its job could not be created, or, for a row whose job is made later (when a job of the batch
 * ends and frees its place), a few characters of its idempotency key, against which webhook()
 * checks the row it reads back; and when the jobs made before the park should end. A parked execution keeps its
 * custom data (`$execution.customData`) but drops the node's own output, so the batch is written
 * there. n8n cuts every value at 512 characters and keeps at most 10 keys per execution: the batch
 * is split into values of at most 512 characters, header included, over at most 6 keys (the rest
 * stay free for the user's own custom data).
 */
export interface CallbackBatch {
	nodeId: string;
	/** The node's run index in its execution (a loop runs it again): part of every row's key. */
	runIndex: number;
	/** When every job made before the park should have ended, by the estimates (ms since the epoch). */
	expectedEndAtMs: number;
	/** In item order: the job id, why that item's job was not created (an error kind), or the row's key check. */
	entries: CallbackBatchEntry[];
}

export type CallbackBatchEntry = { jobId: string } | { failedKind: string } | { pendingKey: string };

/** The characters of a pending row's idempotency key kept to check it (hex: 16⁶ values). */
export const PENDING_KEY_CHARS = 6;

/** The check kept for a pending row: the end of its key's hex digest. */
export function pendingKeyCheck(idempotencyKey: string): string {
	return idempotencyKey.slice(-PENDING_KEY_CHARS);
}

export const MAX_CALLBACK_ITEMS = 50;
const KEY = 'omniVideoBatch';
/** n8n's limit on one custom data value. */
const VALUE_CHARS = 512;
const MAX_KEYS = 6;
const FAILED = '!';
const PENDING = '~';

function chunkKey(index: number): string {
	return index === 0 ? KEY : `${KEY}${index + 1}`;
}

/** The batch as custom data entries, or undefined when it does not fit. */
export function encodeCallbackBatch(batch: CallbackBatch): Record<string, string> | undefined {
	const body = batch.entries
		.map((entry) =>
			'jobId' in entry ? entry.jobId : 'pendingKey' in entry ? PENDING + entry.pendingKey : FAILED + entry.failedKind.replace(/[^a-z_]/g, ''),
		)
		.join(',');
	// The header names the key count, so its length depends on it: try each count until one fits.
	for (let keys = 1; keys <= MAX_KEYS; keys++) {
		const header = `${batch.nodeId}|${keys}|${Math.ceil(batch.expectedEndAtMs / 1000)}|${batch.runIndex}|`;
		const firstChars = VALUE_CHARS - header.length;
		if (firstChars <= 0) return undefined;
		if (body.length > firstChars + (keys - 1) * VALUE_CHARS) continue;
		const entries: Record<string, string> = { [chunkKey(0)]: header + body.slice(0, firstChars) };
		for (let index = 1; index < keys; index++) {
			const from = firstChars + (index - 1) * VALUE_CHARS;
			entries[chunkKey(index)] = body.slice(from, from + VALUE_CHARS);
		}
		return entries;
	}
	return undefined;
}

/** The batch the given node parked with, read back from the execution's custom data. */
export function decodeCallbackBatch(customData: IDataObject, nodeId: string): CallbackBatch | undefined {
	const head = customData[chunkKey(0)];
	if (typeof head !== 'string') return undefined;
	const [owner, count, expectedEndSeconds, runIndex] = head.split('|', 4);
	if (owner !== nodeId || runIndex === undefined || !/^\d+$/.test(runIndex)) return undefined;
	let body = head.slice(owner.length + count.length + expectedEndSeconds.length + runIndex.length + 4);
	for (let index = 1; index < Number(count); index++) {
		const chunk = customData[chunkKey(index)];
		if (typeof chunk !== 'string') return undefined;
		body += chunk;
	}
	const entries = body
		.split(',')
		.map((entry): CallbackBatchEntry =>
			entry.startsWith(FAILED) ? { failedKind: entry.slice(1) } : entry.startsWith(PENDING) ? { pendingKey: entry.slice(1) } : { jobId: entry },
		);
	return { nodeId, runIndex: Number(runIndex), expectedEndAtMs: Number(expectedEndSeconds) * 1000, entries };
}
