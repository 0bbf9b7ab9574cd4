import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import { BatchBook, CallbackChain, isOmniVideoError, type ChainEntry, type OmniVideoClient } from '../../../../core';
import { isLocalSandbox, omniVideoClient } from '../../../shared/n8nHost';
import { errorJson, toNodeError } from '../../../shared/nodeErrors';
import { jobItem, jobJson, videoField } from '../../../shared/jobOutput';
import { callbackRequestOf, respond, respondRefused } from '../../../shared/webhookRequest';
import {
	executeParameterReader,
	planItemJob,
	planKey,
	sendItemJob,
	sendPlanned,
	webhookParameterReader,
	type ItemJobPlan,
} from './createItemJob';
import { keyScopeOf, parkedKeyScope, type KeyScope } from './jobKey';
import { isRefusedCallbackUrl, refusedCallbackFallback, type CallbackFallback } from './callbackFallback';
import {
	MAX_CALLBACK_ITEMS,
	decodeCallbackBatch,
	encodeCallbackBatch,
	pendingKeyCheck,
	type CallbackBatch,
	type CallbackBatchEntry,
} from './callbackBatch';

/**
 * The query parameter a later row's callback URL carries: the row its job belongs to, so that a
 * process that did not make the job (another one, or this one after a restart) knows its row.
 */
const ROW_PARAMETER = 'omniVideoRow';

/** What this process follows of one parked execution (see CallbackChain). */
interface FollowedBatch {
	chain: CallbackChain;
	/** Rows still to make, as execute() read them (only in the process that parked). */
	plans: Map<number, ItemJobPlan>;
	/** The key check execute() noted for each row still to make (see callbackBatch.ts). */
	pendingKeys: Map<number, string>;
	scope: KeyScope;
	resumeUrl: string;
}

type Created = { ok: true; plan: ItemJobPlan; jobId: string; expectedMs: number; submittedAt: string; item: INodeExecutionData } | { ok: false; plan: ItemJobPlan; error: unknown };

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
export async function parkForCallbacks(this: IExecuteFunctions): Promise<INodeExecutionData[][] | CallbackFallback> {
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
			return { ok: true as const, plan: planItemJob(read, itemIndex, scope, { callbackUrl: resumeUrl, allowInsecureLoopbackCallback: isLocalSandbox(baseUrl) }) };
		} catch (error) {
			return { ok: false as const, error, itemIndex };
		}
	});
	const invalid = planned.find((result) => !result.ok);
	if (invalid && !invalid.ok && !this.continueOnFail()) throw toNodeError(this.getNode(), invalid.error, invalid.itemIndex);
	const plans = planned.flatMap((result) => (result.ok ? [result.plan] : []));
	if (plans.length === 0) return [planned.map((result, item) => ({ json: errorJson(!result.ok && result.error), pairedItem: { item } }))];

	// Made now: as many as get a place at once (at least one, so that a callback comes), or all
	// of them when one has a binary source (see above).
	const deferrable = plans.every((plan) => plan.binaryPropertyName === undefined);
	const madeNow = deferrable ? Math.min(plans.length, Math.max(1, client.freeJobSlots())) : plans.length;
	const send = async (plan: ItemJobPlan): Promise<Created> => {
		try {
			const { created, extra } = await sendPlanned.call(this, client, plan, false);
			const item = { json: jobJson(created.job, { ...extra, callbackUrl: resumeUrl }), pairedItem: { item: plan.itemIndex } };
			return { ok: true, plan, jobId: created.job.id, expectedMs: created.expectedMs, submittedAt: String(extra.submittedAt), item };
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
			error.description = `${error.description ?? ''} The jobs already created go on rendering: ${jobIds.join(', ')}`.trim();
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
		const failed = new Map(created.map((result) => [result.plan.itemIndex, !result.ok && result.error]));
		return [planned.map((result, item) => ({ json: errorJson(result.ok ? failed.get(item) : result.error), pairedItem: { item } }))];
	}

	const byRow = new Map<number, Created>(created.map((result) => [result.plan.itemIndex, result]));
	const laterRows = new Map(later.map((plan) => [plan.itemIndex, plan]));
	const expectedEnds = created.map((result) => (result.ok ? Date.parse(result.submittedAt) + result.expectedMs : 0));
	const batch: CallbackBatch = { nodeId: this.getNode().id, expectedEndAtMs: Math.max(Date.now(), ...expectedEnds), entries: [] };
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
		if ('jobId' in entry) chainEntries.push({ jobId: entry.jobId, expectedEndAtMs: made?.ok ? Date.parse(made.submittedAt) + made.expectedMs : undefined });
		else if ('pendingKey' in entry) {
			pendingKeys.set(row, entry.pendingKey);
			chainEntries.push({ pending: true });
		}
		else chainEntries.push({ failedKind: entry.failedKind, error: !result.ok ? result.error : made && !made.ok ? made.error : undefined });
	});
	const entries = encodeCallbackBatch(batch);
	if (!entries) {
		throw new NodeOperationError(this.getNode(), 'Too many jobs to follow in one paused execution', {
			description: `These jobs were created and go on rendering; look them up with Get Job: ${jobIds.join(', ')}`,
		});
	}
	this.getWorkflowDataProxy(0).$execution.customData.setAll(entries);
	// This process receives the callbacks when n8n runs in one process: it follows the batch from
	// the start, with the rows still to make as read here. Elsewhere (queue mode, a restart), the
	// custom data is enough (see resumeOnCallback).
	const chain = new CallbackChain(chainEntries, { witnessed: true, expectedEndAtMs: batch.expectedEndAtMs, watchedSinceMs: Date.now() });
	batches.open(this.getExecutionId(), { chain, plans: laterRows, pendingKeys, scope, resumeUrl }, Date.now());

	const limitMinutes = this.getNodeParameter('callbackTimeoutMinutes', 0, 60) as number;
	await this.putExecutionToWait(new Date(Date.now() + limitMinutes * 60_000));
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

function errorKind(error: unknown): string {
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
function followParked(context: IWebhookFunctions, batch: CallbackBatch, customData: IDataObject): FollowedBatch {
	const pendingKeys = new Map<number, string>();
	const entries = batch.entries.map((entry, row): ChainEntry => {
		if ('jobId' in entry) return { jobId: entry.jobId };
		if ('failedKind' in entry) return { failedKind: entry.failedKind };
		pendingKeys.set(row, entry.pendingKey);
		return { pending: true };
	});
	const chain = new CallbackChain(entries, { witnessed: false, expectedEndAtMs: batch.expectedEndAtMs });
	const scope = parkedKeyScope(customData, context.getExecutionId(), context.getNode().id, context.getWorkflow().id ?? '');
	const resumeUrl = String(context.evaluateExpression('{{ $execution.resumeUrl }}', 0));
	return { chain, plans: new Map(), pendingKeys, scope, resumeUrl };
}

/** The row a callback's URL names, if any (see ROW_PARAMETER). */
function rowNamed(context: IWebhookFunctions): number | undefined {
	const named = (context.getQueryData() as IDataObject)[ROW_PARAMETER];
	const row = typeof named === 'string' && /^\d{1,3}$/.test(named) ? Number(named) : undefined;
	return row;
}

/**
 * Wait for Callback, second half: a callback reached this execution's resume URL. Only a
 * confirmed callback (valid signature, or the job re-read with our key) counts. It is answered at
 * once; then the place the job freed goes to the next row not yet made (its create waits for the
 * limiter), and jobs in doubt, if any, are looked up (see CallbackChain). The execution resumes,
 * exactly once, when every row's job has ended, with one item per input item; a failed job is an
 * item with status "failed" (a resumed node cannot fail the run).
 */
export async function resumeOnCallback(this: IWebhookFunctions): Promise<IWebhookResponseData> {
	const executionId = this.getExecutionId();
	// A batch this process follows needs nothing read back: every callback's work is quicker.
	let followed = batches.get(executionId);
	let parked: { batch: CallbackBatch; customData: IDataObject } | undefined;
	if (!followed) {
		const customData = (this.evaluateExpression('{{ $execution.customData.getAll() }}', 0) ?? {}) as IDataObject;
		const batch = decodeCallbackBatch(customData, this.getNode().id);
		if (!batch) return respond(this, 410, { error: 'This execution is not waiting for Omni Video jobs' });
		parked = { batch, customData };
	}

	const { client, credentials } = await omniVideoClient(this);
	const outcome = await client.handleCallback(callbackRequestOf(this, credentials));
	if (!outcome.accepted) return respondRefused(this, outcome);
	followed ??= batches.get(executionId) ?? batches.open(executionId, followParked(this, parked!.batch, parked!.customData), Date.now());
	const { chain } = followed;
	const jobId = outcome.job.id;
	const named = rowNamed(this);
	if (chain.rowOf(jobId) === undefined) {
		if (named === undefined || !chain.knowJob(named, jobId, false, Date.now())) {
			return respond(this, 404, { error: `Job ${jobId} is not one this execution waits for`, jobId });
		}
		// A row made after the park by a process other than this one: callbacks reach both.
		chain.markShared();
	}
	chain.record(outcome.job, Date.now(), 'callback');
	respond(this, 200, { received: true, jobId });

	await makeNextRows.call(this, followed, client);
	await client.reconcileBatch(chain, { deadlineAtMs: Date.now() + RECONCILE_BUDGET_MS });
	// Lookups may have found jobs ended (places freed) or left rows to make.
	await makeNextRows.call(this, followed, client);
	if (!chain.claimResume()) return { noWebhookResponse: true };
	batches.close(executionId);
	const field = videoField(this);
	const items = await Promise.all(
		chain.outcomes().map(async (outcome, item) => {
			if (!('job' in outcome)) {
				return outcome.error === undefined ? notCreatedItem(outcome.failedKind, item) : { json: errorJson(outcome.error), pairedItem: { item } };
			}
			try {
				return await jobItem(this, outcome.job, { field, itemIndex: item });
			} catch (error) {
				return { json: { ...jobJson(outcome.job), ...errorJson(error) }, pairedItem: { item } };
			}
		}),
	);
	return { noWebhookResponse: true, workflowData: [items] };
}

/**
 * Gives each freed place, and any place free now, to the next row not yet made. A row's create that the service answers
 * with an existing job (same idempotency key: made before a restart, or by another process) used
 * no place: the place goes to the row after it. Duplicate callbacks free nothing (CallbackChain).
 */
async function makeNextRows(this: IWebhookFunctions, followed: FollowedBatch, client: OmniVideoClient): Promise<void> {
	const { chain, resumeUrl } = followed;
	const allowInsecureLoopbackCallback = isLocalSandbox(client.runtime.baseUrl);
	// Places the limiter has free now, less those this batch's jobs made elsewhere hold there.
	const spare = () => Math.max(0, client.freeJobSlots() - chain.runningElsewhere());
	for (let place = chain.takePlace(spare()); place !== undefined; place = chain.takePlace(spare())) {
		const row = chain.claimRow();
		if (row === undefined) {
			chain.givePlaceBack(place);
			return;
		}
		const plan = followed.plans.get(row) ?? readBackRow(this, followed, row, resumeUrl, allowInsecureLoopbackCallback);
		if (!('itemIndex' in plan)) {
			chain.failRow(row, 'input', plan.error);
			chain.givePlaceBack(place);
			continue;
		}
		try {
			const url = new URL(resumeUrl);
			url.searchParams.set(ROW_PARAMETER, String(row));
			const { created } = await sendItemJob(client, plan, { allowInsecureLoopbackCallback, watched: false, callbackUrl: url.toString() });
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
		const plan = planItemJob(webhookParameterReader(context), row, followed.scope, { callbackUrl: resumeUrl, allowInsecureLoopbackCallback });
		const noted = followed.pendingKeys.get(row);
		if (noted !== undefined && pendingKeyCheck(planKey(plan)) === noted) return plan;
		return {
			error: new NodeOperationError(context.getNode(), `Item ${row}'s input read back differently when its turn came, so its job was not created`, {
				itemIndex: row,
				description:
					'Wait for Callback makes the jobs beyond the plan\'s jobs at once when earlier ones end, reading the item again then. Its fields gave other values than when the node started (an expression using the time or random values?): use values fixed by an earlier node, or choose Poll',
			}),
		};
	} catch (error) {
		return { error };
	}
}

/** Batches this process follows, by execution id (see CallbackChain). */
const batches = new BatchBook<FollowedBatch>();
/** Lookups of jobs in doubt run after the answer, but not for longer than this. */
const RECONCILE_BUDGET_MS = 60_000;
