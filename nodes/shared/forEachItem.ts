import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { errorJson, toNodeError } from './nodeErrors';

/**
 * Runs an operation for every item at once: the shared limiter, not the loop, decides the pace, so
 * a batch uses the plan's full concurrency and still never oversteps it. Output keeps item order;
 * with Continue On Fail an item's error becomes an error item, otherwise the first error stops the
 * node with its item index.
 */
export async function forEachItem(
	context: IExecuteFunctions,
	perItem: (this: IExecuteFunctions, itemIndex: number) => Promise<INodeExecutionData[]>,
): Promise<INodeExecutionData[][]> {
	const results = await Promise.all(
		context.getInputData().map(async (_item, itemIndex) => {
			try {
				return { ok: true as const, items: await perItem.call(context, itemIndex) };
			} catch (error) {
				return { ok: false as const, error, itemIndex };
			}
		}),
	);
	const output: INodeExecutionData[] = [];
	for (const result of results) {
		if (result.ok) {
			output.push(...result.items);
		} else if (context.continueOnFail()) {
			output.push({ json: errorJson(result.error), pairedItem: { item: result.itemIndex } });
		} else {
			throw toNodeError(context.getNode(), result.error, result.itemIndex);
		}
	}
	return [output];
}
