import type { IExecuteFunctions } from 'n8n-workflow';
import { canonicalJson, derivedIdempotencyKey, type GenerateVideoInput } from '../../../../core';

/** Where a run notes which execution its jobs belong to (custom data keys: letters, digits, _). */
const RUN_OF = 'omniVideoRunOf';

/** The part of `$execution.customData` this module uses (n8n-workflow does not type the proxy). */
interface CustomData {
	get(key: string): unknown;
	set(key: string, value: string): void;
}

/**
 * The execution whose jobs this run may return: this one, unless it is a retry. n8n's Retry (from
 * the executions list, with the original or the saved workflow) starts a new execution from the
 * failed one's stored data, custom data included, so the first run notes its id there and every
 * retry of it, or of a retry, reads the same id back. Retry On Fail keeps the execution id itself.
 * A new trigger event or a new manual run starts without custom data: it makes new videos. An
 * execution that crashed inside this node never stored its custom data (n8n stores it when a node
 * ends): only Reuse a Job Made From the Same Input gets its jobs back.
 */
export function runOrigin(context: IExecuteFunctions): string {
	const customData = context.getWorkflowDataProxy(0).$execution.customData as CustomData;
	const noted = customData.get(RUN_OF);
	if (typeof noted === 'string' && noted !== '') return noted;
	const own = context.getExecutionId();
	// n8n keeps 10 custom data keys: when the user's own take them all, this set is dropped, and
	// a retry makes new jobs for rows that already had one (the option below still applies).
	customData.set(RUN_OF, own);
	return own;
}

/** Whether this run is a retry of an earlier execution (see runOrigin). */
export function isRetryRun(context: IExecuteFunctions): boolean {
	return runOrigin(context) !== context.getExecutionId();
}

/** What, besides the item and its input, names an item's job (see itemJobKey). */
export interface KeyScope {
	/** The execution whose jobs this run may return (runOrigin). */
	origin: string;
	nodeId: string;
	workflowId: string;
}

/** This run's key scope; notes the run's origin in custom data when this is a first run. */
export function keyScopeOf(context: IExecuteFunctions): KeyScope {
	return { origin: runOrigin(context), nodeId: context.getNode().id, workflowId: context.getWorkflow().id ?? '' };
}

/**
 * The scope read back from a parked execution's custom data (a callback's webhook()): the origin
 * noted by execute(), or the execution itself when n8n dropped the note (10 keys at most).
 */
export function parkedKeyScope(customData: Record<string, unknown>, executionId: string, nodeId: string, workflowId: string): KeyScope {
	const noted = customData[RUN_OF];
	return { origin: typeof noted === 'string' && noted !== '' ? noted : executionId, nodeId, workflowId };
}

/**
 * The idempotency key of one item's job. By default: the run it belongs to (runOrigin), the node,
 * the item and its input, so that every way n8n runs this node again for the same execution gets
 * the job made before (from the service, which remembers a key 24 h). With Reuse a Job Made From
 * the Same Input: the workflow, the node and the input alone, so that any run within that window
 * gets it. Wait for Callback's resume URL names the execution, so it is not part of the key.
 */
export function itemJobKey(
	scope: KeyScope,
	itemIndex: number,
	input: GenerateVideoInput,
	options: { reuseHours: number; resumeUrlAsCallback: boolean },
): string {
	const keyed = options.resumeUrlAsCallback ? { ...input, callbackUrl: 'resume-url' } : input;
	if (options.reuseHours > 0) return derivedIdempotencyKey('same-input', scope.workflowId, scope.nodeId, canonicalJson(keyed));
	return derivedIdempotencyKey(scope.origin, scope.nodeId, itemIndex, canonicalJson(keyed));
}
