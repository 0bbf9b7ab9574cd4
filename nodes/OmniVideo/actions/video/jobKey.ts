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
 * failed one's stored data, the node's execution context included (docs/n8n-internals.md), so
 * the first run notes its id there and every retry of it, or of a retry, reads the same id back.
 * Retry On Fail keeps the execution itself. A new trigger event or a new manual run starts with
 * an empty context: it makes new videos. The node context costs none of the user's custom-data
 * keys; the note is also kept in custom data, where a parked batch's webhook() reads it (when
 * n8n keeps it: 10 keys at most), and an older execution may have left it only there.
 */
export function runOrigin(context: IExecuteFunctions): string {
	const nodeContext = context.getContext('node');
	const customData = context.getWorkflowDataProxy(0).$execution.customData as CustomData;
	const inContext = nodeContext[RUN_OF];
	const inCustomData = customData.get(RUN_OF);
	const noted = typeof inContext === 'string' && inContext !== '' ? inContext : typeof inCustomData === 'string' && inCustomData !== '' ? inCustomData : undefined;
	const origin = noted ?? context.getExecutionId();
	nodeContext[RUN_OF] = origin;
	if (inCustomData !== origin) customData.set(RUN_OF, origin);
	return origin;
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
	/**
	 * The node's run index in the execution: a loop (Loop Over Items, "regenerate until approved")
	 * runs the node again with the same input and wants a new video. A Retry drops the failed run
	 * and Retry On Fail stays in it, so both keep the index, and their jobs.
	 */
	runIndex: number;
}

/** This run's key scope; notes the run's origin in custom data when this is a first run. */
export function keyScopeOf(context: IExecuteFunctions): KeyScope {
	const runIndex = Number(context.getWorkflowDataProxy(0).$thisRunIndex) || 0;
	return { origin: runOrigin(context), nodeId: context.getNode().id, workflowId: context.getWorkflow().id ?? '', runIndex };
}

/**
 * The idempotency key of one item's job. By default: the run it belongs to (runOrigin), the node,
 * the item and its input, so that every way n8n runs this node again for the same execution gets
 * the job made before (from the service, which remembers a key 24 h). With a Row Key: the
 * workflow, the node, the row key and the input, so that any execution that gets the same row
 * with the same input sends the same key (and finds its job in our records: see rowJobLedger).
 * With Reuse a Job Made From the Same Input: the workflow, the node and the input alone, so that
 * any run within that window gets it. Wait for Callback's resume URL names the execution, so it
 * is not part of a run's key nor of a row's.
 */
export function itemJobKey(
	scope: KeyScope,
	itemIndex: number,
	input: GenerateVideoInput,
	options: { reuseHours: number; resumeUrlAsCallback: boolean; rowKey?: string },
): string {
	// A row's key leaves the resume URL out: the row taken again by another execution must send the
	// same key, so that a service that replays keys answers with the job (or refuses the other body)
	// instead of making a second one.
	if (options.rowKey !== undefined) {
		const keyed = options.resumeUrlAsCallback ? { ...input, callbackUrl: 'resume-url' } : input;
		return derivedIdempotencyKey('row', scope.workflowId, scope.nodeId, options.rowKey, canonicalJson(keyed));
	}
	// The resume URL names the execution: left out of a run's own key (its retries poll, sending
	// the same URL), but kept in a key shared across executions (Reuse), whose job calls back the
	// execution that made it: another execution's create would send the key with another body.
	const keyed = options.resumeUrlAsCallback && options.reuseHours === 0 ? { ...input, callbackUrl: 'resume-url' } : input;
	if (options.reuseHours > 0) return derivedIdempotencyKey('same-input', scope.workflowId, scope.nodeId, canonicalJson(keyed));
	// Run 0 keeps the key it had before run indexes were part of it.
	const run = scope.runIndex > 0 ? [`run${scope.runIndex}`] : [];
	return derivedIdempotencyKey(scope.origin, scope.nodeId, ...run, itemIndex, canonicalJson(keyed));
}
