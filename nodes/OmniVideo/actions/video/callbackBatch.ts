import type { IDataObject } from 'n8n-workflow';

/**
 * What a parked Generate node must remember until its callbacks come: each item's job id, or why
 * its job could not be created. A parked execution keeps its custom data (`$execution.customData`)
 * but drops the node's own output, so the batch is written there: values are cut at 512
 * characters and an execution holds at most 10 keys, hence the chunks and the item limit.
 */
export interface CallbackBatch {
	nodeId: string;
	/** In item order: the job id, or why that item's job was not created (an error kind). */
	entries: Array<{ jobId: string } | { failedKind: string }>;
}

export const MAX_CALLBACK_ITEMS = 50;
const KEY = 'omniVideoBatch';
const CHUNK_CHARS = 500;
const MAX_CHUNKS = 6;
const FAILED = '!';

function chunkKey(index: number): string {
	return index === 0 ? KEY : `${KEY}${index + 1}`;
}

/** The batch as custom data entries, or undefined when it does not fit. */
export function encodeCallbackBatch(batch: CallbackBatch): Record<string, string> | undefined {
	const body = batch.entries
		.map((entry) => ('jobId' in entry ? entry.jobId : FAILED + entry.failedKind.replace(/[^a-z_]/g, '')))
		.join(',');
	const chunks: string[] = [];
	for (let at = 0; at < body.length || chunks.length === 0; at += CHUNK_CHARS) chunks.push(body.slice(at, at + CHUNK_CHARS));
	if (chunks.length > MAX_CHUNKS) return undefined;
	const entries: Record<string, string> = {};
	chunks.forEach((chunk, index) => {
		entries[chunkKey(index)] = index === 0 ? `${batch.nodeId}|${chunks.length}|${chunk}` : chunk;
	});
	return entries;
}

/** The batch the given node parked with, read back from the execution's custom data. */
export function decodeCallbackBatch(customData: IDataObject, nodeId: string): CallbackBatch | undefined {
	const head = customData[chunkKey(0)];
	if (typeof head !== 'string') return undefined;
	const [owner, count, first] = head.split('|');
	if (owner !== nodeId || first === undefined) return undefined;
	let body = first;
	for (let index = 1; index < Number(count); index++) {
		const chunk = customData[chunkKey(index)];
		if (typeof chunk !== 'string') return undefined;
		body += chunk;
	}
	const entries = body
		.split(',')
		.map((entry) => (entry.startsWith(FAILED) ? { failedKind: entry.slice(1) } : { jobId: entry }));
	return { nodeId, entries };
}
