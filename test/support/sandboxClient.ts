import type { Transport } from '../../core/http/transport';
import { createOmniVideoClient, type OmniVideoClient } from '../../core/client';
import type { PlanLimits } from '../../core/types';
import { createAxiosTransport } from '../../node-host/axiosTransport';
import { mathRandom, realSleep, systemClock } from '../../node-host/runtime';
import { expectConforms } from './openapi';

let counter = 0;

/** Wraps a transport so that every answer from the sandbox is checked against the OpenAPI document. */
export function conformingTransport(transport: Transport): Transport {
	const check =
		(send: Transport['api']): Transport['api'] =>
		async (request) => {
			const response = await send(request);
			const isVideo = (response.headers['content-type'] ?? '').startsWith('video/');
			expectConforms({
				method: request.method,
				path: new URL(request.url).pathname,
				status: response.status,
				headers: response.headers,
				body: isVideo ? undefined : response.body,
			});
			return response;
		};
	return { api: check(transport.api), plain: check(transport.plain) };
}

/** A core client on the real Node host against a sandbox, with its own limiter and checked answers. */
export function sandboxClient(
	baseUrl: string,
	apiKey: string,
	limits: PlanLimits,
	options: { conformanceCheck?: boolean } = {},
): OmniVideoClient {
	const transport = createAxiosTransport({ apiKey });
	return createOmniVideoClient({
		baseUrl,
		// Scenarios that break the contract on purpose (malformed JSON) skip the check.
		transport: options.conformanceCheck === false ? transport : conformingTransport(transport),
		clock: systemClock,
		sleep: realSleep,
		random: mathRandom,
		limits,
		limiterKey: `contract-${++counter}`,
		redact: [apiKey],
	});
}
