import { WebhookContext } from 'n8n-core';
import {
	NodeHelpers,
	type INode,
	type INodeTypes,
	type IRunExecutionData,
	type IWebhookData,
	type IWebhookDescription,
	type IWebhookResponseData,
	type IWorkflowBase,
	type IWorkflowExecuteAdditionalData,
	type Workflow,
	type WorkflowExecuteMode,
} from 'n8n-workflow';

/* A node's webhooks as n8n finds and calls them: by description, by path, through WebhookContext. */

/** The webhook description of a node: its trigger webhook, or the restart webhook a waiting node listens on. */
export function webhookOf(
	nodeTypes: INodeTypes,
	workflowData: IWorkflowBase,
	nodeName: string,
	restart: boolean,
	method = 'POST',
	suffix = '',
): { node: INode; description: IWebhookDescription } {
	const node = workflowData.nodes.find((candidate) => candidate.name === nodeName);
	if (!node) throw new Error(`No node ${nodeName}`);
	const type = nodeTypes.getByNameAndVersion(node.type, node.typeVersion);
	const description = (type.description.webhooks ?? []).find(
		(candidate) =>
			Boolean(candidate.restartWebhook) === restart &&
			String(candidate.httpMethod) === method &&
			(!restart || String(candidate.path) === suffix),
	);
	if (!description) throw new Error(`Node ${nodeName} has no matching ${restart ? 'restart ' : ''}webhook`);
	return { node, description };
}

/** The path after `/webhook/` that a trigger's production URL ends with. */
export function webhookPath(workflowData: IWorkflowBase, node: INode, description: IWebhookDescription): string {
	return NodeHelpers.getNodeWebhookPath(workflowData.id, node, String(description.path).replace(/^\/+|\/+$/g, ''), false, false);
}

/** WebhookService.runWebhook: the node's webhook() with a WebhookContext, as n8n calls it. */
export async function runWebhook(
	workflow: Workflow,
	node: INode,
	description: IWebhookDescription,
	additionalData: IWorkflowExecuteAdditionalData,
	mode: WorkflowExecuteMode,
	runExecutionData: IRunExecutionData | null,
): Promise<IWebhookResponseData> {
	const type = workflow.nodeTypes.getByNameAndVersion(node.type, node.typeVersion);
	const webhookData = {
		httpMethod: description.httpMethod,
		node: node.name,
		path: String(description.path),
		webhookDescription: description,
		workflowId: workflow.id,
		workflowExecuteAdditionalData: additionalData,
	} as IWebhookData;
	const closeFunctions: Array<() => Promise<void>> = [];
	const context = new WebhookContext(workflow, node, additionalData, mode, webhookData, closeFunctions, runExecutionData);
	try {
		return await type.webhook!.call(context);
	} finally {
		await Promise.allSettled(closeFunctions.map(async (close) => await close()));
	}
}
