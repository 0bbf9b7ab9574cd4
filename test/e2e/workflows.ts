/**
 * Workflows the suite creates in n8n: a Webhook node (so that a production URL starts them, as
 * users run them) in front of Omni Video nodes, and the Omni Video Trigger on its own.
 */
import { randomUUID } from 'node:crypto';

export const PACKAGE = 'n8n-nodes-omni-video';

export interface WorkflowNode {
	id: string;
	name: string;
	type: string;
	typeVersion: number;
	position: [number, number];
	parameters: Record<string, unknown>;
	credentials?: Record<string, { id: string; name: string }>;
	webhookId?: string;
}

export interface WorkflowJson {
	name: string;
	nodes: WorkflowNode[];
	connections: Record<string, { main: Array<Array<{ node: string; type: 'main'; index: number }>> }>;
	settings?: Record<string, unknown>;
}

export interface Credential {
	id: string;
	name: string;
}

let x = 0;
function node(name: string, type: string, typeVersion: number, parameters: Record<string, unknown>, extra: Partial<WorkflowNode> = {}): WorkflowNode {
	x += 220;
	return { id: randomUUID(), name, type, typeVersion, position: [x, 0], parameters, ...extra };
}

export function omniVideo(name: string, parameters: Record<string, unknown>, credential: Credential): WorkflowNode {
	return node(name, `${PACKAGE}.omniVideo`, 1, parameters, { credentials: { omniVideoApi: credential } });
}

/** A step that passes its items on: downstream of a node, its runs say how often the node's output went on. */
export function noOp(name: string): WorkflowNode {
	return node(name, 'n8n-nodes-base.noOp', 1, {});
}

export function httpGetFile(name: string, url: string): WorkflowNode {
	return node(name, 'n8n-nodes-base.httpRequest', 4.2, { url, options: { response: { response: { responseFormat: 'file' } } } });
}

/**
 * Webhook (POST /webhook/<path>, answered at once) → Split Out of `body.rows` → `steps`, in a line.
 * Each row of the posted body becomes one item.
 */
export function webhookWorkflow(name: string, path: string, steps: WorkflowNode[]): WorkflowJson {
	x = 0;
	const webhook = node('Webhook', 'n8n-nodes-base.webhook', 2, { httpMethod: 'POST', path, responseMode: 'onReceived', options: {} }, { webhookId: randomUUID() });
	const split = node('Rows', 'n8n-nodes-base.splitOut', 1, { fieldToSplitOut: 'body.rows', options: {} });
	const nodes = [webhook, split, ...steps];
	return { name, nodes, connections: line(nodes), settings: { executionOrder: 'v1' } };
}

/** The Omni Video Trigger alone; its production URL is /webhook/<webhookId>/omni-video. */
export function triggerWorkflow(name: string, credential: Credential, parameters: Record<string, unknown> = {}): { workflow: WorkflowJson; webhookId: string } {
	x = 0;
	const webhookId = randomUUID();
	const trigger = node('Omni Video Trigger', `${PACKAGE}.omniVideoTrigger`, 1, { events: 'any', ...parameters }, { webhookId, credentials: { omniVideoApi: credential } });
	return { workflow: { name, nodes: [trigger], connections: {}, settings: { executionOrder: 'v1' } }, webhookId };
}

function line(nodes: WorkflowNode[]): WorkflowJson['connections'] {
	const connections: WorkflowJson['connections'] = {};
	for (let i = 0; i < nodes.length - 1; i++) connections[nodes[i].name] = { main: [[{ node: nodes[i + 1].name, type: 'main', index: 0 }]] };
	return connections;
}
