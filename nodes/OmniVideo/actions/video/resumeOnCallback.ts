import type { IDataObject, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';
import { carriesSignature, isTerminal, parseJob, type JobRecord } from '../../../../core';
import { omniVideoClient } from '../../../shared/n8nHost';
import { callbackRequestOf, respond, respondRefused } from '../../../shared/webhookRequest';
import { awaitsUnseenJob } from './createHold';
import { parkedBatch, type HeardCallback, type ParkedBatch } from './callbackBatch';

/**
 * Resumes this process started, by execution: the park each one was for. A second callback
 * reaching this process before the resume has run reads the same stored execution (its step not
 * yet run): resuming again would fail on n8n 2.x (one resume wins; the other caller gets a 500)
 * and run the batch twice at once on 1.x. It is answered 503 with Retry-After instead: on the
 * service's documented reading it comes again, once the step has run; on the strictest reading it
 * is not, and the step looks the job up when it is overdue.
 */
const resuming = new Map<string, string>();
const RETRY_AFTER_S = 5;

function rowNamed(context: IWebhookFunctions): number | undefined {
	const named = (context.getQueryData() as IDataObject).row;
	return typeof named === 'string' && /^\d{1,6}$/.test(named) ? Number(named) : undefined;
}

/** Whether the batch can place the job: one of its rows', or the job of a row whose create is in doubt or held. */
function places(batch: ParkedBatch, jobId: string, row: number | undefined): boolean {
	return batch.rows.some((candidate) => candidate.job === jobId) || awaitsUnseenJob(batch, row);
}

/** Already known to the batch: the job ended in its records, or a callback for it waits for the step. */
function alreadyHeard(batch: ParkedBatch, jobId: string): boolean {
	return batch.rows.some((row) => row.job === jobId && row.ended !== undefined) || batch.heard.some((heard) => heard.job === jobId);
}

/**
 * Wait for Callback, webhook(): a callback reached this execution's resume URL. It is only
 * recorded, in the parked node context, and the execution resumed with it: the next step
 * (execute(), callbackStep.ts) decides everything. Checked first, before anything costs a request:
 * the job must be one of the batch's, and signed when the credential has a secret. Unsigned
 * callbacks are not looked up here: the step confirms them. A copy of a callback already recorded
 * is answered without resuming.
 */
export async function resumeOnCallback(this: IWebhookFunctions): Promise<IWebhookResponseData> {
	const batch = parkedBatch(this);
	if (!batch) return respond(this, 410, { error: 'This execution is not waiting for Omni Video jobs' });
	const executionId = this.getExecutionId();
	let claimed: JobRecord;
	try {
		claimed = parseJob(this.getBodyData());
	} catch {
		return respond(this, 400, { error: 'The callback body is not an Omni Video job.' });
	}
	const row = rowNamed(this);
	if (!places(batch, claimed.id, row)) {
		return respond(this, 404, { error: `Job ${claimed.id} is not one this execution waits for`, jobId: claimed.id });
	}
	const { client, credentials } = await omniVideoClient(this);
	const request = callbackRequestOf(this, credentials);
	let heard: HeardCallback;
	if (request.secret && carriesSignature(request.headers)) {
		// Signed: verified here (no lookup unless the signature fails, and then it is refused).
		// Unsigned with a secret set (a service that does not sign: the spec's strictest reading)
		// is a hint only, like any unsigned callback: the step looks the job up before believing it.
		const outcome = await client.handleCallback({ ...request, expects: () => true });
		if (!outcome.accepted) return respondRefused(this, outcome);
		heard = { job: outcome.job.id, signed: true, record: outcome.job, row, at: client.runtime.clock.now() };
	} else {
		if (!isTerminal(claimed)) return respond(this, 200, { received: true, jobId: claimed.id });
		heard = { job: claimed.id, signed: false, row, at: client.runtime.clock.now() };
	}
	if (alreadyHeard(batch, heard.job)) return respond(this, 200, { received: true, jobId: heard.job, duplicate: true });
	const park = batch.park ?? '';
	if (resuming.get(executionId) === park) {
		return respond(this, 503, { error: `Execution ${executionId} is resuming already: deliver again in ${RETRY_AFTER_S} s`, jobId: heard.job }, { 'retry-after': String(RETRY_AFTER_S) });
	}
	resuming.set(executionId, park);
	// Forget resumes of executions gone by (keeps the map small).
	if (resuming.size > 10_000) resuming.delete(resuming.keys().next().value as string);
	batch.heard.push(heard);
	// n8n resumes with this very execution data and answers the caller once the resume has started.
	return { workflowData: [[]], webhookResponse: { received: true, jobId: heard.job } };
}
