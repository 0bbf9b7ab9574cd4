import type { ICredentialDataDecryptedObject, IDataObject, INode, INodeExecutionData, INodeParameters, IRun } from 'n8n-workflow';
import { OMNI_VIDEO, OMNI_VIDEO_TRIGGER } from './instance';

export const CREDENTIAL = { omniVideoApi: { id: 'cred-1', name: 'Omni Video account' } };

/**
 * Limits for a sandbox sped up `speed` times: its minute lasts 60/speed real seconds, so the
 * plan's windows hold `speed` times the requests per real minute. The concurrency stays.
 */
export function spedUpPlan(plan: { requestsPerMinute: number; requestsPerHour: number; concurrentJobs: number }, speed: number): ICredentialDataDecryptedObject {
	return {
		plan: 'custom',
		requestsPerMinute: plan.requestsPerMinute * speed,
		requestsPerHour: plan.requestsPerHour * speed,
		concurrentJobs: plan.concurrentJobs,
	};
}

export function omniVideoNode(name: string, parameters: INodeParameters, extra: Partial<INode> = {}): INode {
	return {
		id: `id-${name.replace(/\W+/g, '-').toLowerCase()}`,
		name,
		type: OMNI_VIDEO,
		typeVersion: 1,
		position: [200, 0],
		parameters,
		credentials: CREDENTIAL,
		...extra,
	};
}

let webhookCounter = 0;

export function triggerNode(name: string, parameters: INodeParameters = {}): INode {
	return {
		id: `id-${name.replace(/\W+/g, '-').toLowerCase()}`,
		name,
		type: OMNI_VIDEO_TRIGGER,
		typeVersion: 1,
		position: [0, 0],
		parameters,
		credentials: CREDENTIAL,
		// Each trigger gets its own URL, as n8n gives each new node a fresh webhook id.
		webhookId: `hook-${++webhookCounter}`,
	};
}

/** The items a node put out in the run (first output, last run of the node). */
export function outputOf(run: IRun, nodeName: string): INodeExecutionData[] {
	const runs = run.data.resultData.runData[nodeName];
	if (!runs?.length) throw new Error(`Node ${nodeName} did not run`);
	return runs[runs.length - 1].data?.main[0] ?? [];
}

/** The error a node stopped the run with. */
export function errorOf(run: IRun, nodeName: string): (Error & { description?: string; httpCode?: string; context?: IDataObject }) | undefined {
	const runs = run.data.resultData.runData[nodeName];
	return runs?.[runs.length - 1]?.error as (Error & { description?: string; httpCode?: string }) | undefined;
}

/** Items as n8n would pass them in, from plain JSON. */
export function itemsOf(...json: IDataObject[]): INodeExecutionData[] {
	return json.map((entry) => ({ json: entry }));
}

/** Generate Video with Wait for Callback, one item's prompt in `prompt`: 720P, 4 s. */
export function callbackGenerateNode(extra: INodeParameters = {}): INode {
	return omniVideoNode('Generate', {
		resource: 'video',
		operation: 'generate',
		prompt: '={{ $json.prompt }}',
		resolution: '720P',
		duration: 4,
		waitMode: 'callback',
		...extra,
	});
}
