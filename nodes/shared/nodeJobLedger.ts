import type { IExecuteFunctions } from 'n8n-workflow';
import type { JobLedger, LedgerEntry } from '../../core';

/** Where in the node's execution context the ledger lives. */
const LEDGER = 'omniVideoJobs';

/** As stored: `j` the job id, or `s` when the create was sent (ms since the epoch), outcome unseen. */
type Stored = { j: string } | { s: number };

/**
 * The jobs this node's creates made in this execution, by idempotency key, kept in the node's
 * execution context (`getContext('node')`). n8n keeps that context inside the execution's data
 * (runExecutionData.executionData.contextData): it is saved with a failed or a waiting execution,
 * a Retry from the executions list starts from that data (original or saved workflow), and Retry
 * On Fail runs in the same execution. So every way n8n runs the node again for one execution
 * reads back the jobs made before, from our own records (docs/n8n-internals.md).
 */
export function nodeJobLedger(context: IExecuteFunctions): JobLedger {
	const nodeContext = context.getContext('node');
	const stored = (): Record<string, Stored> => {
		const current = nodeContext[LEDGER] as Record<string, Stored> | undefined;
		if (current && typeof current === 'object') return current;
		const fresh: Record<string, Stored> = {};
		nodeContext[LEDGER] = fresh;
		return fresh;
	};
	return {
		find(idempotencyKey): LedgerEntry | undefined {
			const entry = stored()[idempotencyKey];
			if (!entry) return undefined;
			return 'j' in entry ? { jobId: entry.j } : { sentAtMs: entry.s };
		},
		note(idempotencyKey, entry) {
			stored()[idempotencyKey] = 'jobId' in entry ? { j: entry.jobId } : { s: entry.sentAtMs };
		},
		forget(idempotencyKey) {
			delete stored()[idempotencyKey];
		},
	};
}
