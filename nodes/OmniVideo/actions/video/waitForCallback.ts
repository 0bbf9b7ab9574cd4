import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { isLocalSandbox, omniVideoClient } from '../../../shared/n8nHost';
import { errorJson, toNodeError } from '../../../shared/nodeErrors';
import { executeParameterReader, planItemJob } from './createItemJob';
import { keyScopeOf } from './jobKey';
import { refusedCallbackFallback, type CallbackFallback } from './callbackFallback';
import { batchIn, storeBatch, type BatchRow, type ParkedBatch } from './callbackBatch';
import { stepBatch } from './callbackStep';
import { executionResumeUrl } from './resumeUrl';

/**
 * Wait for Callback's first step: every row read and checked once (nothing is sent if one is
 * wrong), the batch noted in the node's execution context, the first jobs made with this
 * execution's resume URL as `callbackUrl` (as many as the plan runs at once now), and the
 * execution parked with a continuation (parkContinuation.ts): each callback, or the moment the
 * batch must look without one, runs the next step (continueForCallbacks). When the service
 * refuses the resume URL itself, nothing is parked: the fallback says why, and the caller polls.
 */
export async function parkForCallbacks(this: IExecuteFunctions): Promise<INodeExecutionData[][] | CallbackFallback> {
	const items = this.getInputData();
	const resumeUrl = executionResumeUrl(this);
	const { client, clock, baseUrl } = await omniVideoClient(this);
	const scope = keyScopeOf(this);
	const read = executeParameterReader(this);
	const rows: BatchRow[] = items.map((_item, itemIndex) => {
		try {
			return { plan: planItemJob(read, itemIndex, scope, { callbackUrl: resumeUrl, allowInsecureLoopbackCallback: isLocalSandbox(baseUrl) }) };
		} catch (error) {
			if (!this.continueOnFail()) throw toNodeError(this.getNode(), error, itemIndex);
			return { error: errorJson(error) };
		}
	});
	const limitMinutes = this.getNodeParameter('callbackTimeoutMinutes', 0, 60) as number;
	const batch: ParkedBatch = { runIndex: scope.runIndex, limitAt: client.runtime.clock.now() + limitMinutes * 60_000, rows, heard: [] };
	// A binary source's upload needs this execution's data: such batches are made here, whole.
	const everyRow = rows.some((row) => row.plan?.binaryPropertyName !== undefined);
	const result = await stepBatch(this, batch, { client, clock }, resumeUrl, { first: true, everyRow, failFast: !this.continueOnFail() });
	if ('refusedCallbackUrl' in result) return refusedCallbackFallback(baseUrl, resumeUrl);
	if ('failed' in result) {
		const failure = result.failed[0];
		const index = rows.findIndex((row) => row.error !== undefined || (row.doubt !== undefined && row.job === undefined));
		const error = toNodeError(this.getNode(), failure, index >= 0 ? index : undefined);
		const made = rows.flatMap((row) => (row.job ? [row.job] : []));
		if (made.length > 0) error.description = `${error.description ?? ''} The jobs already created go on rendering: ${made.join(', ')}`.trim();
		// Not parked after all: the batch is over, its records stay in the ledger for a retry.
		storeBatch(this, undefined);
		throw error;
	}
	return result.output;
}

/** The next step of a parked batch (this run is its continuation), on whatever process runs it. */
export async function continueForCallbacks(this: IExecuteFunctions): Promise<INodeExecutionData[][] | undefined> {
	const batch = batchIn(this.getContext('node'));
	if (!batch) return undefined;
	const resumeUrl = executionResumeUrl(this);
	const { client, clock } = await omniVideoClient(this);
	const result = await stepBatch(this, batch, { client, clock }, resumeUrl, { first: false });
	if ('output' in result) return result.output;
	// A whole batch's error, not one item's.
	throw toNodeError(this.getNode(), 'failed' in result ? result.failed[0] : new Error('The service refused the resume URL'));
}

