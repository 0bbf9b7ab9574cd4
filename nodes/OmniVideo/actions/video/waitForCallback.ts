import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import { CallbackChain, isTerminal, type ChainEntry, type JobRecord } from '../../../../core';
import { isLocalSandbox, omniVideoClient } from '../../../shared/n8nHost';
import { errorJson, toNodeError } from '../../../shared/nodeErrors';
import { jobJson } from '../../../shared/jobOutput';
import {
	executeParameterReader,
	planItemJob,
	planKey,
	sendPlanned,
	type ItemJobPlan,
} from './createItemJob';
import { keyScopeOf } from './jobKey';
import {
	isRefusedCallbackUrl,
	refusedCallbackFallback,
	type CallbackFallback,
} from './callbackFallback';
import {
	MAX_CALLBACK_ITEMS,
	encodeCallbackBatch,
	pendingKeyCheck,
	type CallbackBatch,
	type CallbackBatchEntry,
} from './callbackBatch';
import { batchItems, batches, errorKind } from './callbackRows';
import { batchWaitTill, nameJobsIfTimeUp, type ParkedRow } from './parkedTimeout';

type Created =
	| {
			ok: true;
			plan: ItemJobPlan;
			jobId: string;
			job: JobRecord;
			expectedMs: number;
			submittedAt: string;
			item: INodeExecutionData;
	  }
	| { ok: false; plan: ItemJobPlan; error: unknown };

/**
 * Wait for Callback, first half: read and check every item's job, create the first ones with this
 * execution's resume URL as `callbackUrl`, note the batch in custom data and park the execution.
 * n8n stores a waiting execution only once execute() has returned and refuses callbacks until
 * then, so the node creates only as many jobs as the plan runs at once right now and parks at
 * once; each job that ends frees its place, and webhook() makes the next row's job from the
 * callback. Rows with a binary source are all made here (their data is this execution's, and
 * uploading it needs execute()). When the service refuses the resume URL itself, nothing is
 * parked: the fallback returned says why, and the caller polls.
 */
export async function parkForCallbacks(
	this: IExecuteFunctions,
): Promise<INodeExecutionData[][] | CallbackFallback> {
	const items = this.getInputData();
	if (items.length > MAX_CALLBACK_ITEMS) {
		throw new NodeOperationError(
			this.getNode(),
			`Wait for Callback follows up to ${MAX_CALLBACK_ITEMS} items per run, and this run has ${items.length}`,
			{ description: 'Split the items with Loop Over Items, or choose Poll' },
		);
	}
	const resumeUrl = String(this.evaluateExpression('{{ $execution.resumeUrl }}', 0));
	const { client, baseUrl } = await omniVideoClient(this);
	const scope = keyScopeOf(this);
	const read = executeParameterReader(this);
	// Every row read and checked before anything is sent: a wrong row fails the run at no cost.
	const planned = items.map((_item, itemIndex) => {
		try {
			return {
				ok: true as const,
				plan: planItemJob(read, itemIndex, scope, {
					callbackUrl: resumeUrl,
					allowInsecureLoopbackCallback: isLocalSandbox(baseUrl),
				}),
			};
		} catch (error) {
			return { ok: false as const, error, itemIndex };
		}
	});
	const invalid = planned.find((result) => !result.ok);
	if (invalid && !invalid.ok && !this.continueOnFail())
		throw toNodeError(this.getNode(), invalid.error, invalid.itemIndex);
	const plans = planned.flatMap((result) => (result.ok ? [result.plan] : []));
	if (plans.length === 0)
		return [
			planned.map((result, item) => ({
				json: errorJson(!result.ok && result.error),
				pairedItem: { item },
			})),
		];

	// Made now: as many as get a place at once (at least one, so that a callback comes), or all
	// of them when one has a binary source (see above).
	const deferrable = plans.every((plan) => plan.binaryPropertyName === undefined);
	const madeNow = deferrable
		? Math.min(plans.length, Math.max(1, client.freeJobSlots()))
		: plans.length;
	const send = async (plan: ItemJobPlan): Promise<Created> => {
		try {
			const { created, extra } = await sendPlanned.call(this, client, plan, false);
			const item = {
				json: jobJson(created.job, { ...extra, callbackUrl: resumeUrl }),
				pairedItem: { item: plan.itemIndex },
			};
			return {
				ok: true,
				plan,
				jobId: created.job.id,
				job: created.job,
				expectedMs: created.expectedMs,
				submittedAt: String(extra.submittedAt),
				item,
			};
		} catch (error) {
			return { ok: false, plan, error };
		}
	};
	const created = await Promise.all(plans.slice(0, madeNow).map(send));
	let later = plans.slice(madeNow);
	// Refused for the callback URL alone (nothing made, nothing charged): the node polls instead.
	if (created.every((result) => !result.ok && isRefusedCallbackUrl(result.error))) {
		return refusedCallbackFallback(baseUrl, resumeUrl);
	}
	const firstFailure = created.find((result) => !result.ok);
	const jobIds = created.flatMap((result) => (result.ok ? [result.jobId] : []));
	if (firstFailure && !firstFailure.ok && !this.continueOnFail()) {
		const error = toNodeError(this.getNode(), firstFailure.error, firstFailure.plan.itemIndex);
		if (jobIds.length > 0) {
			error.description =
				`${error.description ?? ''} The jobs already created go on rendering: ${jobIds.join(', ')}`.trim();
		}
		throw error;
	}
	// Nothing made (errors the user lets through): the rows left must not wait for a callback
	// that cannot come; they are made here, one at a time, until one job exists.
	while (jobIds.length === 0 && later.length > 0) {
		const next = await send(later[0]);
		created.push(next);
		later = later.slice(1);
		if (next.ok) jobIds.push(next.jobId);
	}
	if (jobIds.length === 0) {
		const failed = new Map(
			created.map((result) => [result.plan.itemIndex, !result.ok && result.error]),
		);
		return [
			planned.map((result, item) => ({
				json: errorJson(result.ok ? failed.get(item) : result.error),
				pairedItem: { item },
			})),
		];
	}

	const byRow = new Map<number, Created>(created.map((result) => [result.plan.itemIndex, result]));
	const laterRows = new Map(later.map((plan) => [plan.itemIndex, plan]));
	const expectedEnds = created.map((result) =>
		result.ok ? Date.parse(result.submittedAt) + result.expectedMs : 0,
	);
	const batch: CallbackBatch = {
		nodeId: this.getNode().id,
		runIndex: scope.runIndex,
		expectedEndAtMs: Math.max(Date.now(), ...expectedEnds),
		entries: [],
	};
	const chainEntries: ChainEntry[] = [];
	const pendingKeys = new Map<number, string>();
	planned.forEach((result, row) => {
		const made = byRow.get(row);
		const waiting = laterRows.get(row);
		let entry: CallbackBatchEntry;
		if (!result.ok) entry = { failedKind: errorKind(result.error) };
		else if (made?.ok) entry = { jobId: made.jobId };
		else if (made) entry = { failedKind: errorKind(made.error) };
		else entry = { pendingKey: pendingKeyCheck(planKey(waiting!)) };
		batch.entries.push(entry);
		if ('jobId' in entry)
			chainEntries.push({
				jobId: entry.jobId,
				expectedEndAtMs: made?.ok ? Date.parse(made.submittedAt) + made.expectedMs : undefined,
			});
		else if ('pendingKey' in entry) {
			pendingKeys.set(row, entry.pendingKey);
			chainEntries.push({ pending: true });
		} else
			chainEntries.push({
				failedKind: entry.failedKind,
				error: !result.ok ? result.error : made && !made.ok ? made.error : undefined,
			});
	});
	const chain = new CallbackChain(chainEntries, {
		witnessed: true,
		expectedEndAtMs: batch.expectedEndAtMs,
		watchedSinceMs: Date.now(),
	});
	// A job that had ended already (an earlier run's, found again) sends no callback now.
	for (const result of created)
		if (result.ok && isTerminal(result.job)) chain.record(result.job, Date.now());
	// Every row ended already: no callback will come, so nothing is parked.
	if (chain.claimResume()) return [await batchItems(this, chain)];
	// Rows wait but every job made has ended (an earlier try's, found again): no callback would
	// ever make them. The node polls instead, its records giving back the jobs made.
	if (later.length > 0 && !created.some((result) => result.ok && !isTerminal(result.job))) {
		return {
			callbackSkipped:
				'the jobs made before the pause had ended already, so no callback would come',
			callbackUrl: resumeUrl,
		};
	}
	const entries = encodeCallbackBatch(batch);
	if (!entries || !keptInCustomData(this, entries)) {
		// Nothing parked: the node polls every row instead, finding the jobs made here in its own
		// records (nodeJobLedger), so this costs lookups only, never a second job.
		return {
			callbackSkipped: entries
				? `n8n keeps ${CUSTOM_DATA_KEYS} custom data values per execution and this workflow's own left too few for the batch (${Object.keys(entries).length} needed)`
				: "the batch is too large to note in the execution's custom data",
			callbackUrl: resumeUrl,
		};
	}
	// This process receives the callbacks when n8n runs in one process: it follows the batch from
	// the start, with the rows still to make as read here. Elsewhere (queue mode, a restart), the
	// custom data is enough (see resumeOnCallback).
	batches.open(
		this.getExecutionId(),
		{ chain, plans: laterRows, pendingKeys, scope, resumeUrl },
		Date.now(),
	);

	const limitMinutes = this.getNodeParameter('callbackTimeoutMinutes', 0, 60) as number;
	const expectedMs = Math.max(0, ...created.map((result) => (result.ok ? result.expectedMs : 0)));
	const waitTill = batchWaitTill(Date.now(), { rows: planned.length, madeNow, expectedMs, limitMinutes });
	// If no callback wakes it by then, n8n passes these items on, each naming its job.
	const parkedRows = batch.entries.map((entry): ParkedRow => ('jobId' in entry ? { jobId: entry.jobId } : 'pendingKey' in entry ? { later: true } : { notMade: true }));
	nameJobsIfTimeUp(this, parkedRows, waitTill);
	await this.putExecutionToWait(waitTill);
	// Shown while the execution waits; n8n replaces it with the webhook's items on resume.
	return [
		planned.map((result, item): INodeExecutionData => {
			const made = byRow.get(item);
			if (!result.ok) return { json: errorJson(result.error), pairedItem: { item } };
			if (made?.ok) return made.item;
			if (made) return { json: errorJson(made.error), pairedItem: { item } };
			return { json: { status: 'waitingForPlace', callbackUrl: resumeUrl }, pairedItem: { item } };
		}),
	];
}

/** n8n's limit on custom data values per execution (n8n-core's KV_LIMIT; extra ones are dropped unsaid). */
const CUSTOM_DATA_KEYS = 10;

/** Writes the batch to custom data and reads it back: n8n drops keys past its limit without a word. */
function keptInCustomData(context: IExecuteFunctions, entries: Record<string, string>): boolean {
	const customData = context.getWorkflowDataProxy(0).$execution.customData;
	customData.setAll(entries);
	const kept = (customData.getAll() ?? {}) as IDataObject;
	return Object.entries(entries).every(([key, value]) => kept[key] === value);
}
