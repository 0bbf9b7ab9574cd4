import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import * as generate from './video/generate.operation';
import * as getJob from './job/get.operation';
import * as upload from './image/upload.operation';
import { errorJson, toNodeError } from '../../shared/nodeErrors';
import { isToolExecution } from '../../shared/n8nHost';
import { parkForCallbacks } from './video/waitForCallback';

type Operation = (this: IExecuteFunctions, itemIndex: number) => Promise<INodeExecutionData[]>;

const OPERATIONS: Record<string, Operation> = {
	'video:generate': generate.execute,
	'job:get': getJob.execute,
	'image:upload': upload.execute,
};

/**
 * Runs the operation for every item at once: the shared limiter, not the loop, decides the pace,
 * so a batch uses the plan's full concurrency and still never oversteps it. Output keeps item order.
 */
export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const resource = this.getNodeParameter('resource', 0) as string;
	const operation = this.getNodeParameter('operation', 0) as string;
	const run = OPERATIONS[`${resource}:${operation}`];
	if (!run) throw new NodeOperationError(this.getNode(), `The operation "${operation}" is not supported`);
	// An AI agent's tool call must answer in one go: it polls instead of parking the execution.
	if (operation === 'generate' && this.getNodeParameter('waitMode', 0) === 'callback' && !isToolExecution(this)) {
		return parkForCallbacks.call(this);
	}

	const results = await Promise.all(
		items.map(async (_item, itemIndex) => {
			try {
				return { ok: true as const, items: await run.call(this, itemIndex) };
			} catch (error) {
				return { ok: false as const, error, itemIndex };
			}
		}),
	);
	const output: INodeExecutionData[] = [];
	for (const result of results) {
		if (result.ok) {
			output.push(...result.items);
		} else if (this.continueOnFail()) {
			output.push({ json: errorJson(result.error), pairedItem: { item: result.itemIndex } });
		} else {
			throw toNodeError(this.getNode(), result.error, result.itemIndex);
		}
	}
	return [output];
}
