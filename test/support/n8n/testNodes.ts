import type { IExecuteFunctions, INodeExecutionData, INodeType, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';

/*
 * Two small node types the harness registers beside the package's, for what n8n-nodes-base
 * would give a real workflow: a node after ours that counts its runs, and a Wait node (parks;
 * its restart webhook, on path '', resumes with the caller's body).
 */

export const AFTER_TYPE = 'test.after';
export const WAIT_TYPE = 'test.wait';

/** Runs of the "after" nodes, by node name: each run's item count. */
export const afterRuns = new Map<string, number[]>();

const after: INodeType = {
	description: { displayName: 'After', name: 'after', group: ['transform'], version: 1, description: '', defaults: { name: 'After' }, inputs: ['main'], outputs: ['main'], properties: [] },
	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const items = this.getInputData();
		const runs = afterRuns.get(this.getNode().name) ?? [];
		runs.push(items.length);
		afterRuns.set(this.getNode().name, runs);
		return [items];
	},
};

const wait: INodeType = {
	description: {
		displayName: 'Wait',
		name: 'wait',
		group: ['organization'],
		version: 1,
		description: '',
		defaults: { name: 'Wait' },
		inputs: ['main'],
		outputs: ['main'],
		properties: [],
		webhooks: [{ name: 'default', httpMethod: 'POST', path: '', restartWebhook: true, responseMode: 'onReceived' }],
	},
	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		await this.putExecutionToWait(new Date(Date.now() + 3_600_000));
		return [this.getInputData()];
	},
	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		return { workflowData: [[{ json: { resumedBy: this.getBodyData() } }]] };
	},
};

export const testNodeTypes: Record<string, INodeType> = { [AFTER_TYPE]: after, [WAIT_TYPE]: wait };
