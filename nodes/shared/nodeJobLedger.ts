import type { IExecuteFunctions } from 'n8n-workflow';
import type { HostJobRecords, LedgerEntry } from '../../core';
import { fromStored, toStored, type StoredEntry } from './storedLedgerEntry';

/** Where in the node's execution context the ledger lives. */
const LEDGER = 'omniVideoJobs';

/**
 * The jobs this node's creates made in this execution, by idempotency key, kept in the node's
 * execution context (`getContext('node')`). n8n keeps that context inside the execution's data
 * (runExecutionData.executionData.contextData): it is saved with a failed or a waiting execution,
 * a Retry from the executions list starts from that data (original or saved workflow), and Retry
 * On Fail runs in the same execution. So every way n8n runs the node again for one execution
 * reads back the jobs made before, from our own records (docs/n8n-internals.md).
 */
export function nodeJobLedger(context: IExecuteFunctions): HostJobRecords {
	const nodeContext = context.getContext('node');
	const stored = (): Record<string, StoredEntry> => {
		const current = nodeJobRecords(context);
		if (current) return current;
		const fresh: Record<string, StoredEntry> = {};
		nodeContext[LEDGER] = fresh;
		return fresh;
	};
	return {
		find(idempotencyKey): LedgerEntry | undefined {
			const entry = stored()[idempotencyKey];
			if (!entry) return undefined;
			return fromStored(entry);
		},
		note(idempotencyKey, entry) {
			stored()[idempotencyKey] = toStored(entry);
		},
		forget(idempotencyKey) {
			delete stored()[idempotencyKey];
		},
	};
}

/** The entries of nodeJobLedger as stored, if any (others than nodeJobLedger only read them). */
export function nodeJobRecords(context: IExecuteFunctions): Record<string, StoredEntry> | undefined {
	const current = context.getContext('node')[LEDGER] as Record<string, StoredEntry> | undefined;
	return current && typeof current === 'object' ? current : undefined;
}

/** Whether the entry names a job (not only a create sent without an answer). */
function hasJob(entry: LedgerEntry | undefined): entry is Extract<LedgerEntry, { jobId: string }> {
	return entry !== undefined && 'jobId' in entry;
}

/**
 * Both records at once: the execution's own (its retries) and the workflow's (Reuse, or a parked
 * batch's notes). A job either names wins over a create the other saw no answer to: one of them
 * may be older (a stale resume loses the execution's latest records). `copyOwnJobs`: a job only
 * the execution's records name (a Retry's) is noted in the workflow's as well, so that a parked
 * batch's notes name every row with a job, and a step that finds none knows they are lost or out
 * of its reach (createHold.ts). Not for Reuse: that would make an old job new to later runs.
 */
export function bothLedgers(own: HostJobRecords, workflow: HostJobRecords, copyOwnJobs = false): HostJobRecords {
	return {
		find(key) {
			const mine = own.find(key);
			if (hasJob(mine)) {
				if (copyOwnJobs && !hasJob(workflow.find(key))) workflow.note(key, mine);
				return mine;
			}
			const theirs = workflow.find(key);
			return hasJob(theirs) ? theirs : (mine ?? theirs);
		},
		note(key, entry) {
			own.note(key, entry);
			workflow.note(key, entry);
		},
		forget(key) {
			own.forget(key);
			workflow.forget(key);
		},
	};
}
