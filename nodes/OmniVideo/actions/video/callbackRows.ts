import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	IWebhookFunctions,
} from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import {
	BatchBook,
	CallbackChain,
	isOmniVideoError,
	type ChainEntry,
	type OmniVideoClient,
} from '../../../../core';
import { isLocalSandbox } from '../../../shared/n8nHost';
import { errorJson } from '../../../shared/nodeErrors';
import { jobItem, jobJson, videoField } from '../../../shared/jobOutput';
import {
	planItemJob,
	planKey,
	sendItemJob,
	webhookParameterReader,
	type ItemJobPlan,
} from './createItemJob';
import { parkedKeyScope, type KeyScope } from './jobKey';
import { pendingKeyCheck, type CallbackBatch } from './callbackBatch';

/**
 * The query parameter a later row's callback URL carries: the row its job belongs to, so that a
 * process that did not make the job (another one, or this one after a restart) knows its row.
 */
export const ROW_PARAMETER = 'omniVideoRow';

/** What this process follows of one parked execution (see CallbackChain). */
export interface FollowedBatch {
	chain: CallbackChain;
	/** Rows still to make, as execute() read them (only in the process that parked). */
	plans: Map<number, ItemJobPlan>;
	/** The key check execute() noted for each row still to make (see callbackBatch.ts). */
	pendingKeys: Map<number, string>;
	scope: KeyScope;
	resumeUrl: string;
}

/** Batches this process follows, by execution id (see CallbackChain). */
export const batches = new BatchBook<FollowedBatch>();

export function errorKind(error: unknown): string {
	return isOmniVideoError(error) ? error.kind : 'other';
}

/** An item whose job was never created: the error kind is all a parked execution keeps of it. */
function notCreatedItem(kind: string, item: number): INodeExecutionData {
	return {
		json: {
			error: `This item's video job was not created (${kind} error), so there is no video`,
			errorKind: kind,
		},
		pairedItem: { item },
	};
}

/** The batch as a process that did not park it finds it: from the execution's custom data alone. */
export function followParked(
	context: IWebhookFunctions,
	batch: CallbackBatch,
	customData: IDataObject,
): FollowedBatch {
	const pendingKeys = new Map<number, string>();
	const entries = batch.entries.map((entry, row): ChainEntry => {
		if ('jobId' in entry) return { jobId: entry.jobId };
		if ('failedKind' in entry) return { failedKind: entry.failedKind };
		pendingKeys.set(row, entry.pendingKey);
		return { pending: true };
	});
	const chain = new CallbackChain(entries, {
		witnessed: false,
		expectedEndAtMs: batch.expectedEndAtMs,
	});
	const scope = parkedKeyScope(customData, context.getExecutionId(), {
		nodeId: context.getNode().id,
		workflowId: context.getWorkflow().id ?? '',
		runIndex: batch.runIndex,
	});
	const resumeUrl = String(context.evaluateExpression('{{ $execution.resumeUrl }}', 0));
	return { chain, plans: new Map(), pendingKeys, scope, resumeUrl };
}

/** The row a callback's URL names, if any (see ROW_PARAMETER). */
export function rowNamed(context: IWebhookFunctions): number | undefined {
	const named = (context.getQueryData() as IDataObject)[ROW_PARAMETER];
	const row = typeof named === 'string' && /^\d{1,3}$/.test(named) ? Number(named) : undefined;
	return row;
}

/**
 * Gives each freed place, and any place free now, to the next row not yet made. A row's create that the service answers
 * with an existing job (same idempotency key: made before a restart, or by another process) used
 * no place: the place goes to the row after it. Duplicate callbacks free nothing (CallbackChain).
 */
export async function makeNextRows(
	this: IWebhookFunctions,
	followed: FollowedBatch,
	client: OmniVideoClient,
): Promise<void> {
	const { chain, resumeUrl } = followed;
	const allowInsecureLoopbackCallback = isLocalSandbox(client.runtime.baseUrl);
	// Places the limiter has free now, less those this batch's jobs made elsewhere hold there.
	const spare = () => Math.max(0, client.freeJobSlots() - chain.runningElsewhere());
	for (
		let place = chain.takePlace(spare());
		place !== undefined;
		place = chain.takePlace(spare())
	) {
		const row = chain.claimRow();
		if (row === undefined) {
			chain.givePlaceBack(place);
			return;
		}
		const plan =
			followed.plans.get(row) ??
			readBackRow(this, followed, row, resumeUrl, allowInsecureLoopbackCallback);
		if (!('itemIndex' in plan)) {
			chain.failRow(row, 'input', plan.error);
			chain.givePlaceBack(place);
			continue;
		}
		try {
			const url = new URL(resumeUrl);
			url.searchParams.set(ROW_PARAMETER, String(row));
			const { created } = await sendItemJob(client, plan, {
				allowInsecureLoopbackCallback,
				watched: false,
				callbackUrl: url.toString(),
			});
			followed.plans.delete(row);
			const now = Date.now();
			chain.knowJob(row, created.job.id, true, now + created.expectedMs);
			if (created.replayed) {
				// Made by another process (or by this one before a restart): its callbacks may go
				// there, so this process can no longer wait for them alone (see markShared).
				chain.markShared();
				chain.givePlaceBack(place);
				chain.record(created.job, now);
			}
		} catch (error) {
			chain.failRow(row, errorKind(error), error);
			chain.givePlaceBack(place);
		}
	}
}

/**
 * A row still to make, read back in webhook() from the parked execution's input (see
 * webhookParameterReader), and made only if its idempotency key ends as execute() noted: the row
 * is then the same input execute() read, and its job the one a retry of the run would ask for.
 */
function readBackRow(
	context: IWebhookFunctions,
	followed: FollowedBatch,
	row: number,
	resumeUrl: string,
	allowInsecureLoopbackCallback: boolean,
): ItemJobPlan | { error: unknown } {
	try {
		const plan = planItemJob(webhookParameterReader(context), row, followed.scope, {
			callbackUrl: resumeUrl,
			allowInsecureLoopbackCallback,
		});
		const noted = followed.pendingKeys.get(row);
		if (noted !== undefined && pendingKeyCheck(planKey(plan)) === noted) return plan;
		return {
			error: new NodeOperationError(
				context.getNode(),
				`Item ${row}'s input read back differently when its turn came, so its job was not created`,
				{
					itemIndex: row,
					description:
						"Wait for Callback makes the jobs beyond the plan's jobs at once when earlier ones end, reading the item again then. Its fields gave other values than when the node started (an expression using the time or random values?): use values fixed by an earlier node, or choose Poll",
				},
			),
		};
	} catch (error) {
		return { error };
	}
}

/** One item per row, once every row has ended: the job as it ended, or why it was never made. */
export async function batchItems(
	context: IWebhookFunctions | IExecuteFunctions,
	chain: CallbackChain,
): Promise<INodeExecutionData[]> {
	const field = videoField(context);
	return await Promise.all(
		chain.outcomes().map(async (outcome, item) => {
			if (!('job' in outcome)) {
				return outcome.error === undefined
					? notCreatedItem(outcome.failedKind, item)
					: { json: errorJson(outcome.error), pairedItem: { item } };
			}
			try {
				return await jobItem(context, outcome.job, { field, itemIndex: item });
			} catch (error) {
				return { json: { ...jobJson(outcome.job), ...errorJson(error) }, pairedItem: { item } };
			}
		}),
	);
}
