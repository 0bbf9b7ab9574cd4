import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import {
	hostLedger,
	validateGenerateInput,
	type GeneratedJob,
	type GenerateVideoInput,
	type HostJobRecords,
	type OmniVideoClient,
} from '../../../../core';
import { isLocalSandbox, isToolExecution, omniVideoClient } from '../../../shared/n8nHost';
import { uploadFromBinary } from '../image/upload.operation';
import { bothLedgers, nodeJobLedger } from '../../../shared/nodeJobLedger';
import { reuseJobLedger, rowJobLedger } from '../../../shared/workflowJobLedger';
import { batchJobLedger } from '../../../shared/batchJobLedger';
import { itemJobKey, keyScopeOf, type KeyScope } from './jobKey';

/** One item's job as created, with what the output item needs. */
export interface CreatedItemJob {
	created: GeneratedJob;
	client: OmniVideoClient;
	extra: IDataObject;
}

/** Reads one parameter of one item (getNodeParameter(name, itemIndex, fallback) in execute()). */
export type ParameterReader = (name: string, itemIndex: number, fallback?: unknown) => unknown;

/** One item's create as read from its parameters and checked, before anything is sent. */
export interface ItemJobPlan {
	itemIndex: number;
	source: string;
	/** The create's input; a binary source's image URL is only known after its upload. */
	input: GenerateVideoInput;
	binaryPropertyName?: string;
	reuseHours: number;
	/** The row this item is, as the user names it (Row Key): its job is the row's in every execution. */
	rowKey?: string;
	retryFailed: boolean;
	expectedMs: number;
	/** The callback URL is the execution's resume URL (Wait for Callback): it is not part of the key. */
	resumeUrlAsCallback: boolean;
	scope: KeyScope;
}

/** Reads the item's fields and checks everything but a binary source's upload (throws if wrong). */
export function planItemJob(
	read: ParameterReader,
	itemIndex: number,
	scope: KeyScope,
	options: { callbackUrl?: string; allowInsecureLoopbackCallback: boolean },
): ItemJobPlan {
	const source = read('source', itemIndex) as string;
	const itemOptions = (read('options', itemIndex, {}) ?? {}) as IDataObject;
	const input: GenerateVideoInput = {
		prompt: read('prompt', itemIndex) as string,
		resolution: read('resolution', itemIndex) as string,
		duration: read('duration', itemIndex) as number,
		callbackUrl: options.callbackUrl ?? ((itemOptions.callbackUrl as string) || undefined),
	};
	if (source === 'imageUrl') input.imageUrl = read('imageUrl', itemIndex) as string;
	if (source === 'videoUrl') input.videoUrl = read('videoUrl', itemIndex) as string;
	const binary = source === 'binaryImage';
	// Check everything but the upload before spending a request on it.
	validateGenerateInput(binary ? { ...input, imageUrl: 'https://upload.pending/image' } : input, {
		allowInsecureLoopbackCallback: options.allowInsecureLoopbackCallback,
	});
	return {
		itemIndex,
		source,
		input,
		binaryPropertyName: binary ? (read('binaryPropertyName', itemIndex) as string) : undefined,
		reuseHours: Number(itemOptions.reuseHours) || 0,
		rowKey: rowKeyOf(itemOptions.rowKey),
		retryFailed: itemOptions.retryFailedJobs === true,
		expectedMs: (Number(itemOptions.expectedRenderSeconds) || 0) * 1000,
		resumeUrlAsCallback: options.callbackUrl !== undefined,
		scope,
	};
}

/** Row Key as given: a number or text names the row; empty (or only spaces) names none. */
function rowKeyOf(value: unknown): string | undefined {
	if (typeof value === 'number' && Number.isFinite(value)) return String(value);
	if (typeof value !== 'string' || value.trim() === '') return undefined;
	return value.trim();
}

/** The plan's idempotency key. Same run (or a retry of it), same item, same input → same key; same row and input → same key. */
export function planKey(plan: ItemJobPlan): string {
	return itemJobKey(plan.scope, plan.itemIndex, plan.input, { reuseHours: plan.reuseHours, resumeUrlAsCallback: plan.resumeUrlAsCallback, rowKey: plan.rowKey });
}

/**
 * Creates a planned item's job once (its image uploaded first by the caller). `callbackUrl`
 * replaces the plan's own where the callback must say more (which row), without changing the key.
 */
export async function sendItemJob(
	client: OmniVideoClient,
	plan: ItemJobPlan,
	options: { signal?: AbortSignal; allowInsecureLoopbackCallback: boolean; watched: boolean; callbackUrl?: string; ledger?: HostJobRecords; retryBudgetMs?: number; lookUpWhileWaiting?: boolean },
): Promise<{ created: GeneratedJob; extra: IDataObject }> {
	const created = await client.generateVideo(
		{ ...plan.input, callbackUrl: options.callbackUrl ?? plan.input.callbackUrl },
		{
			idempotencyKey: planKey(plan),
			reuse: { retryFailed: plan.retryFailed, maxAgeMs: plan.reuseHours > 0 ? plan.reuseHours * 3_600_000 : undefined },
			signal: options.signal,
			allowInsecureLoopbackCallback: options.allowInsecureLoopbackCallback,
			expectedMs: plan.expectedMs,
			watched: options.watched,
			ledger: options.ledger && hostLedger(options.ledger),
			retryBudgetMs: options.retryBudgetMs,
			lookUpWhileWaiting: options.lookUpWhileWaiting,
		},
	);
	const extra: IDataObject = { mode: created.mode, idempotencyKey: created.idempotencyKey, submittedAt: new Date().toISOString() };
	// Said only when it happens: this item's job was made by an earlier run (and paid for then).
	if (created.replayed) extra.reused = true;
	if (created.replacedJobIds.length > 0) extra.madeAgainAfter = created.replacedJobIds;
	return { created, extra };
}

/** The reader execute() uses: n8n's getNodeParameter for the item. */
export function executeParameterReader(context: IExecuteFunctions): ParameterReader {
	return (name, itemIndex, fallback) => context.getNodeParameter(name, itemIndex, fallback);
}

/** Reads the item's fields, uploads a binary source first, and creates its job once. */
export async function createItemJob(
	this: IExecuteFunctions,
	itemIndex: number,
	overrides: { callbackUrl?: string; watched?: boolean } = {},
): Promise<CreatedItemJob> {
	const { client, baseUrl } = await omniVideoClient(this);
	const allowInsecureLoopbackCallback = isLocalSandbox(baseUrl);
	const plan = planItemJob(executeParameterReader(this), itemIndex, keyScopeOf(this), {
		callbackUrl: overrides.callbackUrl,
		allowInsecureLoopbackCallback,
	});
	return { client, ...(await sendPlanned.call(this, client, plan, overrides.watched)) };
}

/**
 * Uploads a planned item's binary source, if any, then creates its job (execute() only).
 * `row`: the item is a row of a parked Wait for Callback batch, called back at `callbackUrl`; its
 * create waits for limits no longer than `retryBudgetMs` (see GenerateVideoOptions).
 */
export async function sendPlanned(
	this: IExecuteFunctions,
	client: OmniVideoClient,
	plan: ItemJobPlan,
	watchedOverride?: boolean,
	row?: { callbackUrl: string; retryBudgetMs?: number; lookUpWhileWaiting?: boolean },
): Promise<{ created: GeneratedJob; extra: IDataObject }> {
	if (plan.binaryPropertyName !== undefined) {
		const uploaded = await uploadFromBinary.call(this, client, plan.itemIndex, plan.binaryPropertyName);
		plan = { ...plan, input: { ...plan.input, imageUrl: uploaded.fileUrl } };
	}
	return await sendItemJob(client, plan, {
		signal: this.getExecutionCancelSignal(),
		allowInsecureLoopbackCallback: isLocalSandbox(client.runtime.baseUrl),
		// A polled job is seen ending here, so it keeps its place among the plan's jobs at once
		// until then; a job left to a callback may end unseen (n8n refuses callbacks until parked).
		watched: watchedOverride ?? (this.getNodeParameter('waitMode', 0) === 'poll' || isToolExecution(this)),
		callbackUrl: row?.callbackUrl,
		retryBudgetMs: row?.retryBudgetMs,
		lookUpWhileWaiting: row?.lookUpWhileWaiting,
		ledger: ledgerFor(this, plan, row !== undefined),
	});
}

/**
 * Where a create is noted: always where n8n's retries read it back (nodeJobLedger); for a parked
 * batch's row, also where a step on another process reads it after a stale resume
 * (batchJobLedger); with a Row Key, also where any later execution that takes the row again reads
 * it (rowJobLedger); with Reuse, where a later execution reads it (reuseJobLedger), unless its
 * key names this execution's resume URL, which no other execution sends.
 */
function ledgerFor(context: IExecuteFunctions, plan: ItemJobPlan, batchRow: boolean): HostJobRecords {
	const own = nodeJobLedger(context);
	const execution = batchRow ? bothLedgers(own, batchJobLedger(context), true) : own;
	if (plan.rowKey !== undefined) return bothLedgers(execution, rowJobLedger(context));
	if (batchRow) return execution;
	return plan.reuseHours > 0 && !plan.resumeUrlAsCallback ? bothLedgers(own, reuseJobLedger(context, plan.reuseHours * 3_600_000)) : own;
}
