import type { IExecuteData, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import { runExecutionDataOf } from './callbackBatch';

/** The marker on a continuation's stack entry (its `metadata`). */
const MARK = 'omniVideoContinuation';

/** Whether this run of the node is a continuation of a parked batch (see parkWithContinuation). */
export function isContinuation(context: IExecuteFunctions): boolean {
	const metadata = context.getExecuteData().metadata as Record<string, unknown> | undefined;
	return typeof metadata?.[MARK] === 'number';
}

/**
 * Parks the execution so that, however it wakes (a callback's resume or the wait time passing),
 * this node's execute() runs again with the node context as stored. n8n resumes a waiting node by
 * disabling it (a disabled node passes its input on) and running it; so the waiting entry's input
 * is emptied (it passes nothing on, no child runs) and a copy of the entry, not disabled, with the
 * original items, is put on the stack behind it: the engine puts the waiting entry back in front
 * of the stack when execute() returns (WorkflowExecute.processRunExecutionData, n8n 1.x and 2.x).
 * The stack is the execution's own (runExecutionDataOf), checked at run time.
 */
export async function parkWithContinuation(context: IExecuteFunctions, waitTill: Date): Promise<void> {
	const stack = runExecutionDataOf(context)?.executionData?.nodeExecutionStack;
	if (!Array.isArray(stack)) {
		throw new NodeOperationError(context.getNode(), 'This n8n version does not let Wait for Callback park (no execution stack)', {
			description: 'Choose Poll, or tell the node’s maintainers your n8n version',
		});
	}
	const entry = context.getExecuteData();
	const previous = (entry.metadata as Record<string, unknown> | undefined)?.[MARK];
	const continuation: IExecuteData = {
		// A copy: n8n sets `disabled` on the waiting entry's node object.
		node: { ...entry.node, disabled: false },
		data: { main: [context.getInputData().map((item) => ({ json: item.json, binary: item.binary, pairedItem: item.pairedItem }))] },
		source: entry.source,
		metadata: { ...(entry.metadata ?? {}), [MARK]: (typeof previous === 'number' ? previous : 0) + 1 } as IExecuteData['metadata'],
	};
	entry.data.main[0] = [];
	stack.unshift(continuation);
	try {
		await context.putExecutionToWait(waitTill);
	} catch (error) {
		if (!lostFromActiveExecutions(error) || runExecutionDataOf(context)?.waitTill?.getTime() !== waitTill.getTime()) throw new NodeOperationError(context.getNode(), error as Error);
	}
}

/**
 * n8n 2.8.4 sets the wait time in the execution's data, then tells its list of active executions,
 * which throws when the execution is not on it. Seen when n8n's wait tracker started a wake a few
 * milliseconds after the previous step had parked: that run's end took the execution off the
 * list the wake had just put it on, and the step's park then failed the execution, with its batch
 * (the jobs render on, paid). The wait time is set, so n8n saves the execution as waiting anyway,
 * and the next callback or wake resumes it.
 */
function lostFromActiveExecutions(error: unknown): boolean {
	return error instanceof Error && error.message === 'No active execution found';
}
