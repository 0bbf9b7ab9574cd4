import type { INodeExecutionData, IRun, IRunExecutionData } from 'n8n-workflow';

/*
 * A parked (waiting) execution as n8n keeps it in its database, and as it reads it back to resume.
 */

/** ExecutionMetadataService: at most 10 custom data keys, each value cut at 512 characters. */
export function storedAsN8nDoes(resultData: IRunExecutionData['resultData']): void {
	if (!resultData.metadata) return;
	const kept = Object.entries(resultData.metadata).slice(0, 10);
	resultData.metadata = Object.fromEntries(kept.map(([key, value]) => [key, String(value).slice(0, 512)]));
}

/** WaitingWebhooks: the parked run read back and prepared for the resume. */
export function resumeDataOf(parked: IRun): { data: IRunExecutionData; lastNode: string } {
	const data = structuredClone(parked.data);
	const lastNode = data.resultData.lastNodeExecuted!;
	data.executionData!.nodeExecutionStack[0].node.disabled = true;
	data.waitTill = undefined;
	data.resultData.runData[lastNode].pop();
	return { data, lastNode };
}

/** WebhookHelpers.prepareExecutionData: the webhook's items replace the waiting node's input. */
export function continueWith(data: IRunExecutionData, items: INodeExecutionData[][]): void {
	data.executionData!.nodeExecutionStack[0].data.main = items;
}
