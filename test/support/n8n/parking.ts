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

/**
 * WebhookHelpers.prepareExecutionData: the webhook's items replace the waiting node's input. n8n
 * 2.x also marks the stack entry `forwardAllOutputs`, so that n8n-core 2.x's handleDisabledNode
 * passes on every output the webhook filled, not only the first; n8n-core 1.x's has no such flag
 * and ignores it.
 */
export function continueWith(data: IRunExecutionData, items: INodeExecutionData[][]): void {
	const resuming = data.executionData!.nodeExecutionStack[0];
	resuming.data.main = items;
	// `forwardAllOutputs` is a 2.x member of ITaskMetadata; the pinned 1.x types lack it.
	resuming.metadata = { ...resuming.metadata, forwardAllOutputs: true } as typeof resuming.metadata;
}
