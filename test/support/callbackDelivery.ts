import type { Sandbox } from '../../sandbox';
import { createNodeClient } from '../../node-host/runtime';
import { startReceiver, type ReceivedCallback } from './receiver';

/**
 * Creates a job on the sandbox whose callback goes to a loopback receiver, and returns its first
 * `count` deliveries as the service sent them (headers and the exact body the signature covers).
 */
export async function deliveriesOf(sandbox: Sandbox, prompt: string, count = 1): Promise<ReceivedCallback[]> {
	const receiver = await startReceiver();
	try {
		const client = createNodeClient({ baseUrl: sandbox.url, apiKey: sandbox.keys.premium, plan: 'premium' });
		await client.generateVideo({ prompt, resolution: '720P', duration: 4, callbackUrl: receiver.url }, { allowInsecureLoopbackCallback: true });
		return (await receiver.waitFor(count, 15_000)).slice(0, count);
	} finally {
		await receiver.close();
	}
}

/** The first delivery of a new job's callback. */
export async function deliveryOf(sandbox: Sandbox, prompt: string): Promise<ReceivedCallback> {
	return (await deliveriesOf(sandbox, prompt))[0];
}
