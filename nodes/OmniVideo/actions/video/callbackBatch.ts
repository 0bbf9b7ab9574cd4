import type { IDataObject, IExecuteFunctions, IRunExecutionData, IWebhookFunctions } from 'n8n-workflow';
import type { JobRecord } from '../../../../core';
import type { ItemJobPlan } from './createItemJob';
import { forgetBatchJobs } from '../../../shared/batchJobLedger';

/**
 * One row of a Wait for Callback batch, the same record from the park to the end: its plan until
 * its job is made, then its job, then how the job ended (or why it has none).
 */
export interface BatchRow {
	/** The create still to send (read and checked once, in the first execute()). */
	plan?: ItemJobPlan;
	job?: string;
	/** When the job should end, by the estimate (ms since the epoch). */
	endAt?: number;
	/** The render time the create was given (ms): how late counts as overdue. */
	renderMs?: number;
	/** The process that made the job (its limiter holds the job's place; see PROCESS_MARK). */
	by?: string;
	/** When the job was last looked up. */
	lookedAt?: number;
	ended?: JobRecord;
	/** An unsigned callback said it ended: the next step looks it up before believing it. */
	confirm?: boolean;
	/** Its job was found ended by a look-up, no callback of it heard: lost, or refused by n8n. */
	uncalled?: boolean;
	/** The create was sent and its outcome is unknown (ms since the epoch): never sent again. */
	doubt?: number;
	/** The doubt is whether another process's step made the job before that moment (see holdIfStale). */
	elsewhere?: boolean;
	/** The row has no job: its item, saying why. */
	error?: IDataObject;
}

/** A callback as webhook() recorded it; the next step of the batch decides what it means. */
export interface HeardCallback {
	job: string;
	/** The signature held: the body is the job's state. Unsigned, it is only a hint to look. */
	signed: boolean;
	/** The job as the signed callback gave it. */
	record?: JobRecord;
	/** The row the callback URL named (a create in doubt whose job this binds). */
	row?: number;
	at: number;
}

/** Creates held back after a stale wake (see holdIfStale), and the rows whose job may exist elsewhere. */
export interface CreateHold {
	/** The first rows still to make when the hold began, as many as the plan runs at once. */
	rows: number[];
	/** When the hold began (the client's clock, ms since the epoch). */
	at: number;
}

/**
 * A batch as the node keeps it in its execution context (`getContext('node')`): saved with the
 * waiting execution, read by whichever process resumes it, no size cap but the execution's.
 */
export interface ParkedBatch {
	/** The node's run index when the batch started: part of every row's key (continuations are new runs). */
	runIndex: number;
	/** Limit Wait Time, as a moment (ms since the epoch). */
	limitAt: number;
	rows: BatchRow[];
	/**
	 * This park's mark, new at every step: what a resume is for. Not a count of steps: a stale resume
	 * (n8n 2.x resuming with data read before another step ran) counts from an older value and can
	 * park again at a count a process has already resumed from.
	 */
	park?: string;
	/** When this park asked n8n to wake the execution without a callback (real ms since the epoch). */
	wakeAt?: number;
	/** Callbacks webhook() recorded since the last step. */
	heard: HeardCallback[];
	/** Creates held back after a stale wake (see holdIfStale in createHold.ts). */
	hold?: CreateHold;
	/** The batch parked once more, at its end, for n8n to load its Data Table module (see dataTableWait.ts). */
	waitedForModules?: boolean;
}

const KEY = 'omniVideoBatch';

/**
 * The execution's data as n8n stored it, through the node context's protected `runExecutionData`
 * (n8n-core's NodeExecutionContext; not in n8n-workflow's types): the stack execute() parks on,
 * and the node contexts webhook() records in. Checked at run time by the callers.
 */
export function runExecutionDataOf(context: IExecuteFunctions | IWebhookFunctions): IRunExecutionData | undefined {
	const internal = context as unknown as { runExecutionData?: IRunExecutionData | null };
	return internal.runExecutionData ?? undefined;
}

/** A mark of this loaded copy of the node: another process (or this one restarted) has another. */
export const PROCESS_MARK = Math.random().toString(36).slice(2, 10);

let parks = 0;

/** A new park's mark: unique across processes (this process's mark) and within one (a counter). */
export function newParkMark(): string {
	parks += 1;
	return `${PROCESS_MARK}.${parks}`;
}

export function batchIn(nodeContext: IDataObject): ParkedBatch | undefined {
	const batch = nodeContext[KEY] as ParkedBatch | undefined;
	return batch && typeof batch === 'object' && Array.isArray(batch.rows) ? batch : undefined;
}

/** Keeps the parked batch in the node's context, or, once it is over, drops it and the workflow's notes of its creates. */
export function storeBatch(context: IExecuteFunctions, batch: ParkedBatch | undefined): void {
	const nodeContext = context.getContext('node');
	if (batch) nodeContext[KEY] = batch;
	else {
		delete nodeContext[KEY];
		forgetBatchJobs(context);
	}
}

/**
 * The parked node's context as webhook() finds it: n8n builds the webhook's context over the
 * stored execution (WebhookContext's protected `runExecutionData`), and resumes with that very
 * object (WebhookHelpers.prepareExecutionData), so what webhook() appends there is what the next
 * step reads. Not in n8n-workflow's types: checked at run time.
 */
export function parkedNodeContext(context: IWebhookFunctions): IDataObject | undefined {
	const contextData = runExecutionDataOf(context)?.executionData?.contextData;
	if (!contextData || typeof contextData !== 'object') return undefined;
	return (contextData as Record<string, IDataObject>)[`node:${context.getNode().name}`];
}

export function parkedBatch(context: IWebhookFunctions): ParkedBatch | undefined {
	const nodeContext = parkedNodeContext(context);
	return nodeContext ? batchIn(nodeContext) : undefined;
}

/** Whether a row waits for a place to have its job made (read, not yet sent, not refused). */
export function waitsForPlace(row: BatchRow): boolean {
	return row.plan !== undefined && row.job === undefined && row.error === undefined && row.doubt === undefined;
}

export function runningRows(batch: ParkedBatch): BatchRow[] {
	return batch.rows.filter((row) => row.job !== undefined && row.ended === undefined);
}

export function isOver(batch: ParkedBatch): boolean {
	return batch.rows.every((row) => row.ended !== undefined || row.error !== undefined || (row.doubt !== undefined && row.job === undefined));
}
