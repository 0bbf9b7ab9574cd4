/* eslint-disable @n8n/community-nodes/no-restricted-imports -- the Activepieces piece: n8n's rules for community nodes do not apply to it */
import {
	OmniVideoError,
	baseUrlProblem,
	createOmniVideoClient,
	isLocalSandbox,
	keyFingerprint,
	normaliseBaseUrl,
	planLimits,
	ValidationError,
	type OmniVideoClient,
	unsaidDetails,
	abortableSleep,
} from '../../core';
import type { OmniVideoConnection } from './auth';
import { fetchTransport } from './fetch-transport';

const sleep = abortableSleep({ start: (callback: () => void, ms: number) => setTimeout(callback, ms), cancel: clearTimeout });

export interface ConnectedClient {
	client: OmniVideoClient;
	baseUrl: string;
	/** The sandbox on loopback may call back over http://; a real service never. */
	allowInsecureLoopbackCallback: boolean;
}

/** The connection's values, from an action's or trigger's `auth` (`{ props }`) or validate's (the props). */
export function connectionOf(auth: unknown): OmniVideoConnection {
	const value = auth as { props?: OmniVideoConnection } & OmniVideoConnection;
	return value?.props ?? value;
}

/** A core client for the connection; its limiter is shared with every step on the same key in this process. */
export function omniVideoClient(connection: OmniVideoConnection): ConnectedClient {
	const baseUrl = normaliseBaseUrl(connection.baseUrl);
	const problem = baseUrlProblem(baseUrl);
	if (problem) throw new ValidationError(`${problem} Edit the Omni Video connection.`, [{ field: 'baseUrl', value: connection.baseUrl, message: problem }]);
	const apiKey = String(connection.apiKey ?? '');
	const client = createOmniVideoClient({
		baseUrl,
		transport: fetchTransport({ apiKey }),
		clock: { now: () => Date.now() },
		sleep,
		random: Math.random,
		limits: planLimits(connection),
		limiterKey: keyFingerprint(apiKey, baseUrl),
		redact: [apiKey],
	});
	return { client, baseUrl, allowInsecureLoopbackCallback: isLocalSandbox(baseUrl) };
}

/**
 * What a flow's run shows for an error of core: its message with what to do and the job, request
 * id and idempotency key it concerns, so that a run's log says which job to look up.
 */
export function stepError(error: unknown): unknown {
	if (!(error instanceof OmniVideoError)) return error;
	const { hint, jobId, requestId } = unsaidDetails(error);
	const worded = new Error([error.message, hint, jobId && `(job ${jobId})`, requestId && `(request ${requestId})`].filter(Boolean).join(' '));
	worded.name = `OmniVideo${error.name}`;
	return worded;
}

/** Runs a step's work and rewords what core throws (see stepError). */
export async function inStepTerms<T>(work: () => Promise<T>): Promise<T> {
	try {
		return await work();
	} catch (error) {
		throw stepError(error);
	}
}
