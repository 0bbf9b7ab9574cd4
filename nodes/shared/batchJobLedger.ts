import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import type { HostJobRecords, LedgerEntry } from '../../core';
import { nodeJobRecords } from './nodeJobLedger';
import { fromStored, toStored, type StoredEntry } from './storedLedgerEntry';

/** Where in the node's workflow static data the creates of parked batches are noted, by execution. */
const BATCHES = 'omniVideoBatchJobs';
/** A batch that never ended (cancelled, deleted) is dropped this long after its last create. */
const KEEP_MS = 48 * 3_600_000;
/** At most this many notes before a new batch's (about 60 bytes each in the workflow's row). */
const MAX_NOTES = 2_000;

/** One batch as stored: `t` its last create (ms since the epoch), its entries by idempotency key. */
type Stored = { t: number; jobs: Record<string, StoredEntry> };

/** The records of every batch, made when `make` (only a write: n8n saves changed static data). */
function batchesOf(context: IExecuteFunctions, make: true): Record<string, Stored>;
function batchesOf(context: IExecuteFunctions, make: false): Record<string, Stored> | undefined;
function batchesOf(context: IExecuteFunctions, make: boolean): Record<string, Stored> | undefined {
	const staticData = context.getWorkflowStaticData('node');
	const current = staticData[BATCHES] as Record<string, Stored> | undefined;
	if (current && typeof current === 'object') return current;
	if (!make) return undefined;
	const fresh: Record<string, Stored> = {};
	staticData[BATCHES] = fresh as unknown as IDataObject;
	return fresh;
}

/**
 * Drops the records of batches left behind: older than KEEP_MS, or the oldest past MAX_NOTES (two
 * executions that save their copies of the static data in turn can bring back an ended batch's).
 */
function makeRoom(batches: Record<string, Stored>, now: number): void {
	let notes = 0;
	for (const [id, batch] of Object.entries(batches).sort(([, a], [, b]) => b.t - a.t)) {
		notes += Object.keys(batch.jobs).length;
		if (now - batch.t > KEEP_MS || notes > MAX_NOTES) delete batches[id];
	}
}

/**
 * Notes again what the execution's own records (nodeJobLedger) hold and these notes lack. A step
 * that wait time woke on a queue-mode worker runs on the static data of the execution's own copy of
 * the workflow, as it was when the execution began: n8n 2.8.4 loads the workflow's for a resumed
 * call, not for a wake (WaitTracker: loadStaticData false), and saves that copy over the
 * workflow's when the step changes it. Without this, the notes of the rows other steps made since
 * would be lost, and a stale resume after that step would send their creates again. The
 * execution's own records are current in such a step (the worker reads them from the database).
 */
function carryOver(notes: Stored, records: Readonly<Record<string, StoredEntry>> | undefined): void {
	for (const [key, record] of Object.entries(records ?? {})) {
		const noted = notes.jobs[key];
		if (noted === undefined || ('s' in noted && 'j' in record)) notes.jobs[key] = { ...record };
	}
}

/**
 * Whether the static data this step reads holds notes of this execution's batch. A production
 * batch that has made a job always has them in the workflow's static data; a step that wait time
 * woke on a queue-mode worker reads the execution's own copy instead, which never has them (see
 * carryOver).
 */
export function hasBatchNotes(context: IExecuteFunctions): boolean {
	return batchesOf(context, false)?.[context.getExecutionId()] !== undefined;
}

/**
 * The jobs a Wait for Callback batch's creates made, kept in the node's workflow static data as
 * well as in the execution's own data (nodeJobLedger). n8n 2.x lets a webhook process resume a
 * parked execution with the data it read before another step ran and parked, so that step's rows
 * look unmade again; when the next step runs on another worker, nothing in its memory says
 * otherwise (MadeJobs). The static data is saved when a step parks (before the execution is marked
 * waiting again) and a resumed execution reads it afresh from the database, so that step finds the
 * jobs here and sends no create. n8n saves no static data for a manual run from the editor, nor
 * merges two executions' copies: there the execution's own records and the service's replay remain
 * (docs/n8n-internals.md).
 */
export function batchJobLedger(context: IExecuteFunctions): HostJobRecords {
	const executionId = context.getExecutionId();
	const batch = (): Stored | undefined => batchesOf(context, false)?.[executionId];
	return {
		find(idempotencyKey): LedgerEntry | undefined {
			const entry = batch()?.jobs[idempotencyKey];
			if (!entry) return undefined;
			return fromStored(entry);
		},
		note(idempotencyKey, entry) {
			const batches = batchesOf(context, true);
			const now = Date.now();
			if (batches[executionId] === undefined) {
				makeRoom(batches, now);
				batches[executionId] = { t: now, jobs: {} };
			}
			const own = batches[executionId];
			own.t = now;
			carryOver(own, nodeJobRecords(context));
			own.jobs[idempotencyKey] = toStored(entry);
		},
		forget(idempotencyKey) {
			delete batch()?.jobs[idempotencyKey];
		},
	};
}

/** The batch has ended: its records go (the execution's own data keeps them for a Retry). */
export function forgetBatchJobs(context: IExecuteFunctions): void {
	const batches = batchesOf(context, false);
	if (batches?.[context.getExecutionId()] !== undefined) delete batches[context.getExecutionId()];
}
