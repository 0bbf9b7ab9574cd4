import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import type { JobLedger, LedgerEntry } from '../../core';
import { fromStored, toStored, type StoredEntry } from './storedLedgerEntry';

/** Where in the node's workflow static data the jobs made for Reuse live. */
const REUSED = 'omniVideoReuse';

/** As stored (see StoredEntry), with `t` when noted (ms since the epoch). */
type Stored = StoredEntry & { t: number };

/**
 * The jobs Reuse a Job Made From the Same Input made, by idempotency key, kept in the node's
 * workflow static data, which n8n saves with the workflow when a production execution (a trigger,
 * a schedule, a webhook, a Retry) ends or parks, and reads again at the next one: a later
 * execution gets the job from our own records, not from the service replaying the key (which it
 * may not do). n8n saves no static data for a manual run from the editor: there Reuse rests on the
 * service's replay alone (docs/n8n-internals.md). Records older than the window are dropped.
 */
export function reuseJobLedger(context: IExecuteFunctions, windowMs: number): JobLedger {
	const staticData = context.getWorkflowStaticData('node');
	const now = (): number => Date.now();
	const stored = (): Record<string, Stored> => {
		const current = staticData[REUSED] as Record<string, Stored> | undefined;
		if (current && typeof current === 'object') return current;
		const fresh: Record<string, Stored> = {};
		staticData[REUSED] = fresh as unknown as IDataObject;
		return fresh;
	};
	return {
		find(idempotencyKey): LedgerEntry | undefined {
			const entry = stored()[idempotencyKey];
			if (!entry || now() - entry.t > windowMs) return undefined;
			return fromStored(entry);
		},
		note(idempotencyKey, entry) {
			const records = stored();
			const at = now();
			for (const [key, old] of Object.entries(records)) if (at - old.t > windowMs) delete records[key];
			records[idempotencyKey] = { ...toStored(entry), t: at };
		},
		forget(idempotencyKey) {
			delete stored()[idempotencyKey];
		},
	};
}
