import type { IExecuteFunctions } from 'n8n-workflow';
import type { ParkedBatch } from './callbackBatch';

const DATA_TABLE = 'n8n-nodes-base.dataTable';

/** How long a batch that waits for n8n's modules parks (real ms); n8n's wait tracker wakes it at its next poll. */
export const DATA_TABLE_WAIT_MS = 5_000;

/**
 * Whether a batch about to end should park once more, for n8n to load its Data Table module. n8n
 * 2.41's `n8n start` starts its wait tracker before it loads its modules (WaitTracker.init, then
 * moduleRegistry.initModules): an execution whose wait time passed while n8n was down is resumed
 * at once, without the module's helpers (`getDataTableProxy`), and every Data Table node after this
 * one fails with "the module is disabled" (seen end to end: a scheduled pipeline's rows stayed
 * "taken"). So when this step has no such helper and a Data Table node follows, the batch parks
 * for a moment, once: the next wake runs with the modules loaded. Nothing else reads it.
 */
export function waitsForDataTables(context: IExecuteFunctions, batch: ParkedBatch): boolean {
	if (batch.waitedForModules === true) return false;
	const helpers = context.helpers as { getDataTableProxy?: unknown };
	if (typeof helpers.getDataTableProxy === 'function') return false;
	return context.getChildNodes(context.getNode().name).some((node) => node.type === DATA_TABLE && node.disabled !== true);
}
