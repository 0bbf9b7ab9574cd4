/* eslint-disable @n8n/community-nodes/no-restricted-globals -- dev tooling, never shipped in the n8n package */
import type { Clock, Random, Sleep } from '../core/http/transport';
import { createOmniVideoClient, type OmniVideoClient } from '../core/client';
import { keyFingerprint } from '../core/jobs/idempotency';
import { PLANS, type PlanLimits, type PlanName } from '../core/types';
import { abortableSleep } from '../core/http/hostKit';
import { createAxiosTransport } from './axiosTransport';

export const systemClock: Clock = { now: () => Date.now() };

/** Real time, cancellable: rejects with the signal's reason when it aborts. */
export const realSleep: Sleep = abortableSleep({ start: setTimeout, cancel: clearTimeout });

export const mathRandom: Random = () => Math.random();

/** A core client on the plain Node host, for tools, tests and benchmarks. */
export function createNodeClient(options: {
	baseUrl: string;
	apiKey: string;
	plan?: PlanName | PlanLimits;
}): OmniVideoClient {
	const limits = typeof options.plan === 'object' ? options.plan : PLANS[options.plan ?? 'pro'];
	return createOmniVideoClient({
		baseUrl: options.baseUrl,
		transport: createAxiosTransport(options),
		clock: systemClock,
		sleep: realSleep,
		random: mathRandom,
		limits,
		limiterKey: keyFingerprint(options.apiKey, options.baseUrl),
		redact: [options.apiKey],
	});
}
