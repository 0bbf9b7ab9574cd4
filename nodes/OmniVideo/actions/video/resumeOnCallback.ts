import type { IDataObject, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';
import { omniVideoClient } from '../../../shared/n8nHost';
import { callbackRequestOf, respond, respondRefused } from '../../../shared/webhookRequest';
import { decodeCallbackBatch, type CallbackBatch } from './callbackBatch';
import { batchItems, batches, followParked, makeNextRows, rowNamed } from './callbackRows';

/** Lookups of jobs in doubt run after the answer, but not for longer than this. */
const RECONCILE_BUDGET_MS = 60_000;

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
		const customData = (this.evaluateExpression('{{ $execution.customData.getAll() }}', 0) ??
			{}) as IDataObject;
		const batch = decodeCallbackBatch(customData, this.getNode().id);
		if (!batch)
			return respond(this, 410, { error: 'This execution is not waiting for Omni Video jobs' });
		parked = { batch, customData };
	}

	const { client, credentials } = await omniVideoClient(this);
	// The batch as this process knows it, or as the custom data gives it, checked before the
	// callback costs a request: only a job of the batch, or one a row still waits for, is looked up.
	const known = followed ?? followParked(this, parked!.batch, parked!.customData);
	const named = rowNamed(this);
	const expects = (jobId: string) =>
		known.chain.rowOf(jobId) !== undefined || (named !== undefined && known.chain.awaitsJob(named));
	const outcome = await client.handleCallback({ ...callbackRequestOf(this, credentials), expects });
	if (!outcome.accepted) return respondRefused(this, outcome);
	followed ??= batches.get(executionId) ?? batches.open(executionId, known, Date.now());
	const { chain } = followed;
	const jobId = outcome.job.id;
	if (chain.rowOf(jobId) === undefined) {
		if (named === undefined || !chain.knowJob(named, jobId, false, Date.now())) {
			return respond(this, 404, {
				error: `Job ${jobId} is not one this execution waits for`,
				jobId,
			});
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
	const items = await batchItems(this, chain);
	return { noWebhookResponse: true, workflowData: [items] };
}
