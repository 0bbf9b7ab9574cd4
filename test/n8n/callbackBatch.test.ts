import { decodeCallbackBatch, encodeCallbackBatch, pendingKeyCheck, MAX_CALLBACK_ITEMS } from '../../nodes/OmniVideo/actions/video/callbackBatch';
import { derivedIdempotencyKey } from '../../core';

describe('the parked batch in custom data', () => {
	const nodeId = '3f1c7a52-9a0e-4d8e-b7a1-2c5e8f0d9b41';
	const entries = Array.from({ length: MAX_CALLBACK_ITEMS }, (_, i) =>
		i % 17 === 5 ? { failedKind: 'credits' } : { jobId: `job_${String(i).padStart(2, '0')}_9f8e7d6c5b4a3f2e1d0c` },
	);

	it('fits n8n’s limits (10 keys, 512 characters a value) with 50 long job ids, and reads back whole', () => {
		const encoded = encodeCallbackBatch({ nodeId, runIndex: 0, expectedEndAtMs: 1_800_000_000_000, entries })!;
		expect(encoded).toBeDefined();
		expect(Object.keys(encoded).length).toBeLessThanOrEqual(6);
		for (const value of Object.values(encoded)) expect(value.length).toBeLessThanOrEqual(512);
		// What n8n stores: every value cut at 512 characters.
		const stored = Object.fromEntries(Object.entries(encoded).map(([key, value]) => [key, value.slice(0, 512)]));
		expect(decodeCallbackBatch(stored, nodeId)).toEqual({ nodeId, runIndex: 0, expectedEndAtMs: 1_800_000_000_000, entries });
	});

	it('belongs to the node that parked it', () => {
		const encoded = encodeCallbackBatch({ nodeId, runIndex: 0, expectedEndAtMs: 0, entries: entries.slice(0, 2) })!;
		expect(decodeCallbackBatch(encoded, 'another-node')).toBeUndefined();
	});

	it('keeps the rows still to make, each with its key check, beside job ids and failures', () => {
		const mixed = entries.map((entry, i) => (i >= 10 && 'jobId' in entry ? { pendingKey: pendingKeyCheck(derivedIdempotencyKey('run', i)) } : entry));
		const encoded = encodeCallbackBatch({ nodeId, runIndex: 0, expectedEndAtMs: 1_800_000_000_000, entries: mixed })!;
		for (const value of Object.values(encoded)) expect(value.length).toBeLessThanOrEqual(512);
		expect(decodeCallbackBatch(encoded, nodeId)?.entries).toEqual(mixed);
		expect(mixed.filter((entry) => 'pendingKey' in entry)).toHaveLength(38);
	});
});
