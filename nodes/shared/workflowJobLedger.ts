import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import type { HostJobRecords, LedgerEntry } from '../../core';
import { fromStored, toStored, type StoredEntry } from './storedLedgerEntry';

/** Where in the node's workflow static data the jobs made for Reuse live. */
const REUSED = 'omniVideoReuse';
/** Where the jobs made for a Row Key live (apart from Reuse's: each slot drops by its own window). */
const ROWS = 'omniVideoRows';
/** How long a row's job is kept: the service remembers a key as long (docs/api.md, Idempotency). */
export const ROW_WINDOW_MS = 24 * 3_600_000;
/** At most this many rows' records (about 70 bytes each in the workflow's row): the oldest go first. */
const MAX_ROWS = 2_000;

/** As stored (see StoredEntry), with `t` when noted (ms since the epoch). */
type Stored = StoredEntry & { t: number };

/**
 * Jobs by idempotency key in the node's workflow static data, which n8n saves with the workflow
 * when a production execution (a trigger, a schedule, a webhook, a Retry) ends or parks, and
 * reads again at the next one: a later execution gets the job from our own records, not from the
 * service replaying the key (which it may not do). n8n saves no static data for a manual run from
 * the editor: there only the service's replay is left (docs/n8n-internals.md). Records older than
 * the window, and the oldest past `maxRecords`, are dropped when one is noted.
 */
function workflowJobLedger(context: IExecuteFunctions, slot: string, windowMs: number, maxRecords = Infinity): HostJobRecords {
	const staticData = context.getWorkflowStaticData('node');
	const now = (): number => Date.now();
	const stored = (): Record<string, Stored> => {
		const current = staticData[slot] as Record<string, Stored> | undefined;
		if (current && typeof current === 'object') return current;
		const fresh: Record<string, Stored> = {};
		staticData[slot] = fresh as unknown as IDataObject;
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
			const kept = Object.entries(records).sort(([, a], [, b]) => b.t - a.t);
			for (const [index, [key, old]] of kept.entries()) if (at - old.t > windowMs || index >= maxRecords - 1) delete records[key];
			records[idempotencyKey] = { ...toStored(entry), t: at };
		},
		forget(idempotencyKey) {
			delete stored()[idempotencyKey];
		},
	};
}

/** The jobs Reuse a Job Made From the Same Input made, kept for its window (see workflowJobLedger). */
export function reuseJobLedger(context: IExecuteFunctions, windowMs: number): HostJobRecords {
	return workflowJobLedger(context, REUSED, windowMs);
}

/**
 * The jobs made for items with a Row Key, kept 24 h (see workflowJobLedger): a row that another
 * production execution takes again (a schedule's next tick after the row was reset, a crashed
 * execution's rows) gets its job from here, looked up, never created again. Noted before each
 * create leaves and with its job once answered; saved by n8n when the execution parks or ends, so
 * a create sent in a step that n8n stopped before it parked is not here (docs/pipelines.md).
 */
export function rowJobLedger(context: IExecuteFunctions): HostJobRecords {
	return workflowJobLedger(context, ROWS, ROW_WINDOW_MS, MAX_ROWS);
}
