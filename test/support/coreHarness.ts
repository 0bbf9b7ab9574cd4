import { createOmniVideoClient, type OmniVideoClient } from '../../core/client';
import { PLANS, type PlanLimits } from '../../core/types';
import type { Transport } from '../../core/transport';
import { FakeTime } from './fakeTime';
import { FakeApi } from './fakeApi';

let counter = 0;

/** A core client on virtual time against the in-memory fake API, with its own limiter. */
export function fakeClient(
	limits: PlanLimits = PLANS.pro,
	/** Wraps the fake API's transport, to watch or break requests on their way. */
	wrapTransport: (transport: Transport) => Transport = (transport) => transport,
): {
	time: FakeTime;
	api: FakeApi;
	client: OmniVideoClient;
} {
	const time = new FakeTime();
	const api = new FakeApi(time.clock, limits);
	const client = createOmniVideoClient({
		baseUrl: api.baseUrl,
		transport: wrapTransport(api.transport),
		clock: time.clock,
		sleep: time.sleep,
		random: () => 0.5,
		limits,
		limiterKey: `fake-${++counter}`,
	});
	return { time, api, client };
}

/** The most requests found in any window of `windowMs` among the given request times. */
export function maxInAnyWindow(times: number[], windowMs: number): number {
	const sorted = [...times].sort((a, b) => a - b);
	let best = 0;
	let start = 0;
	for (let end = 0; end < sorted.length; end++) {
		while (sorted[end] - sorted[start] >= windowMs) start++;
		best = Math.max(best, end - start + 1);
	}
	return best;
}
