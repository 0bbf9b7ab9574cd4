import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import { BatchBook, BatchProgress, isOmniVideoError } from '../../../../core';
import { omniVideoClient } from '../../../shared/n8nHost';
import { errorJson, toNodeError } from '../../../shared/nodeErrors';
import { jobItem, jobJson, videoField } from '../../../shared/jobOutput';
import { callbackRequestOf, respond, respondRefused } from '../../../shared/webhookRequest';
import { createItemJob } from './createItemJob';
import { isRefusedCallbackUrl, refusedCallbackFallback, type CallbackFallback } from './callbackFallback';
import { MAX_CALLBACK_ITEMS, decodeCallbackBatch, encodeCallbackBatch, type CallbackBatch } from './callbackBatch';

/**
 * Wait for Callback, first half: create every item's job with this execution's resume URL as
 * `callbackUrl`, remember the jobs, and park the execution. n8n stores a waiting execution only
 * once execute() has returned, so a callback that comes sooner is refused and the service's
 * retry brings it again. When the service refuses the resume URL itself, nothing is parked: the
 * fallback returned says why, and the caller polls.
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
	const created = await Promise.all(
		items.map(async (_item, itemIndex) => {
			try {
				return { ok: true as const, ...(await createItemJob.call(this, itemIndex, { callbackUrl: resumeUrl })) };
			} catch (error) {
				return { ok: false as const, error, itemIndex };
			}
		}),
	);
	const jobIds = created.flatMap((result) => (result.ok ? [result.created.job.id] : []));
	// Refused for the callback URL alone (nothing made, nothing charged): the node polls instead.
	if (jobIds.length === 0 && created.every((result) => !result.ok && isRefusedCallbackUrl(result.error))) {
		return refusedCallbackFallback((await omniVideoClient(this)).baseUrl, resumeUrl);
	}
	const firstFailure = created.find((result) => !result.ok);
	if (firstFailure && !firstFailure.ok && (!this.continueOnFail() || jobIds.length === 0)) {
		const error = toNodeError(this.getNode(), firstFailure.error, firstFailure.itemIndex);
		if (jobIds.length > 0) {
			error.description = `${error.description ?? ''} The jobs already created go on rendering: ${jobIds.join(', ')}`.trim();
		}
		if (this.continueOnFail()) return [created.map((result, item) => ({ json: errorJson(!result.ok && result.error), pairedItem: { item } }))];
		throw error;
	}

	const createdJobs = created.flatMap((result) => (result.ok ? [result.created] : []));
	const createdExtras = created.flatMap((result) => (result.ok ? [result.extra] : []));
	const expectedEndAtMs = Date.now() + Math.max(0, ...createdJobs.map((job) => job.expectedMs));
	const batch: CallbackBatch = {
		nodeId: this.getNode().id,
		expectedEndAtMs,
		entries: created.map((result) =>
			result.ok ? { jobId: result.created.job.id } : { failedKind: isOmniVideoError(result.error) ? result.error.kind : 'other' },
		),
	};
	const entries = encodeCallbackBatch(batch);
	if (!entries) {
		throw new NodeOperationError(this.getNode(), 'Too many jobs to follow in one paused execution', {
			description: `These jobs were created and go on rendering; look them up with Get Job: ${jobIds.join(', ')}`,
		});
	}
	this.getWorkflowDataProxy(0).$execution.customData.setAll(entries);
	// This process receives the callbacks (n8n's main process, or its webhook processor in the
	// same process): it follows the batch from the start and needs no lookups to know its state.
	// Jobs that should have ended while the other creates waited for a slot may have called back
	// before the park, and n8n refused those callbacks: they are looked up at the first callback.
	const expectedEnds = new Map(
		createdJobs.map((job, index) => [job.job.id, Date.parse(String(createdExtras[index].submittedAt)) + job.expectedMs]),
	);
	const perJob = { expectedEnds, watchedSinceMs: Date.now() };
	batches.open(this.getExecutionId(), new BatchProgress(jobIds, expectedEndAtMs, true, perJob), Date.now());

	const limitMinutes = this.getNodeParameter('callbackTimeoutMinutes', 0, 60) as number;
	await this.putExecutionToWait(new Date(Date.now() + limitMinutes * 60_000));
	// Shown while the execution waits; n8n replaces it with the webhook's items on resume.
	return [
		created.map((result, item) =>
			result.ok
				? { json: jobJson(result.created.job, { ...result.extra, callbackUrl: resumeUrl }), pairedItem: { item } }
				: { json: errorJson(result.error), pairedItem: { item } },
		),
	];
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

/**
 * Wait for Callback, second half: a callback reached this execution's resume URL. Only a
 * confirmed callback (valid signature, or the job re-read with our key) counts. It is answered at
 * once from what this process knows of the batch; lookups, if any are needed (jobs in doubt, see
 * BatchProgress), come after the answer. The execution resumes, exactly once, when every job has
 * ended, with one item per input item; a failed job is an item with status "failed" (a resumed
 * node cannot fail the run).
 */
export async function resumeOnCallback(this: IWebhookFunctions): Promise<IWebhookResponseData> {
	const customData = this.evaluateExpression('{{ $execution.customData.getAll() }}', 0);
	const batch = decodeCallbackBatch((customData ?? {}) as IDataObject, this.getNode().id);
	if (!batch) return respond(this, 410, { error: 'This execution is not waiting for Omni Video jobs' });

	const { client, credentials } = await omniVideoClient(this);
	const outcome = await client.handleCallback(callbackRequestOf(this, credentials));
	if (!outcome.accepted) return respondRefused(this, outcome);
	const executionId = this.getExecutionId();
	const jobIds = batch.entries.flatMap((entry) => ('jobId' in entry ? [entry.jobId] : []));
	const progress =
		batches.get(executionId) ??
		batches.open(executionId, new BatchProgress(jobIds, batch.expectedEndAtMs, false), Date.now());
	if (!progress.includes(outcome.job.id)) {
		return respond(this, 404, { error: `Job ${outcome.job.id} is not one this execution waits for`, jobId: outcome.job.id });
	}
	progress.record(outcome.job, Date.now());
	respond(this, 200, { received: true, jobId: outcome.job.id });

	await client.reconcileBatch(progress, { deadlineAtMs: Date.now() + RECONCILE_BUDGET_MS });
	if (!progress.claimResume()) return { noWebhookResponse: true };
	batches.close(executionId);
	const complete = new Map(progress.jobs().map((job) => [job.id, job]));
	const field = videoField(this);
	const items = await Promise.all(
		batch.entries.map(async (entry, item) => {
			if (!('jobId' in entry)) return notCreatedItem(entry.failedKind, item);
			const job = complete.get(entry.jobId)!;
			try {
				return await jobItem(this, job, { field, itemIndex: item });
			} catch (error) {
				return { json: { ...jobJson(job), ...errorJson(error) }, pairedItem: { item } };
			}
		}),
	);
	return { noWebhookResponse: true, workflowData: [items] };
}

/** Batches this process follows, by execution id (see BatchProgress). */
const batches = new BatchBook();
/** Lookups of jobs in doubt run after the answer, but not for longer than this. */
const RECONCILE_BUDGET_MS = 60_000;
