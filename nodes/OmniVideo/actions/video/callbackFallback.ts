import type { IExecuteFunctions } from 'n8n-workflow';
import { callbackUrlProblem, isOmniVideoError } from '../../../../core';
import { isLocalSandbox, omniVideoClient } from '../../../shared/n8nHost';
import { isRetryRun, runOrigin } from './jobKey';
import { executionResumeUrl, resumeUrlOfExecution } from './resumeUrl';

/** Why Wait for Callback polls instead of parking, and the callback URL its creates send then. */
export interface CallbackFallback {
	callbackSkipped: string;
	callbackUrl?: string;
}

/**
 * Resume URL origins a service refused as callback URLs, per base URL: the next executions in
 * this process poll at once instead of asking again (the local sandbox may or may not take plain
 * http on loopback, depending on how it was started, and only its answer tells).
 */
const refusedOrigins = new Set<string>();

function refusedKey(baseUrl: string, resumeUrl: string): string {
	return `${baseUrl}\u0000${new URL(resumeUrl).origin}`;
}

/**
 * Checked before anything is created. A resume URL the service cannot call would leave the
 * execution waiting until its limit, every video unseen: the node polls instead, and creates with
 * no callback. A retry of an execution that parked polls too: its jobs were made with that
 * execution's resume URL, which the creates send again so that the service recognises them.
 */
export async function callbackFallback(context: IExecuteFunctions): Promise<CallbackFallback | undefined> {
	if (runsOnEngineV2(context.getExecutionId())) return { callbackSkipped: ENGINE_V2_REASON };
	const { baseUrl } = await omniVideoClient(context);
	const resumeUrl = executionResumeUrl(context);
	const problem = callbackUrlProblem(resumeUrl, { allowInsecureLoopbackCallback: isLocalSandbox(baseUrl) });
	if (problem) return { callbackSkipped: problem };
	if (refusedOrigins.has(refusedKey(baseUrl, resumeUrl))) return { callbackSkipped: refusedReason(resumeUrl) };
	if (!isRetryRun(context)) return undefined;
	const origin = runOrigin(context);
	return {
		callbackSkipped: `this run retries execution ${origin}, whose jobs call that execution back`,
		callbackUrl: resumeUrlOfExecution(resumeUrl, origin),
	};
}

const ENGINE_V2_REASON = "this workflow runs on n8n's Engine 2.0, which cannot resume a waiting execution yet";

/**
 * Whether the execution runs on n8n's opt-in Engine 2.0 (the workflow setting `engineType: 'v2'`,
 * from about 2.37). It cannot resume a waiting execution: `putExecutionToWait` parks nothing there
 * and every callback is refused, so Wait for Callback polls. The node cannot read the setting under
 * that engine (its workflow has no settings there); its execution ids tell: UUIDs (v7), where the
 * classic engine's are integers.
 */
export function runsOnEngineV2(executionId: string | undefined): boolean {
	return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(executionId ?? '');
}

function refusedReason(resumeUrl: string): string {
	return `Omni Video refused the resume URL ${new URL(resumeUrl).origin} as a callback URL (it calls back only over https://)`;
}

/**
 * The service refused every create of a park for its callback URL (nothing made, nothing
 * charged): noted for the next executions, and the node polls instead.
 */
export function refusedCallbackFallback(baseUrl: string, resumeUrl: string): CallbackFallback {
	refusedOrigins.add(refusedKey(baseUrl, resumeUrl));
	return { callbackSkipped: refusedReason(resumeUrl) };
}

/** The service's answer to a create whose callback URL it will not call. */
export function isRefusedCallbackUrl(error: unknown): boolean {
	return isOmniVideoError(error) && error.code === 'invalid_callback_url';
}
