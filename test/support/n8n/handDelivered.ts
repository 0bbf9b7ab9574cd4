import { standardWebhookSignature } from '../../../sandbox/signing';
import type { N8nTestInstance } from './instance';

/**
 * Callbacks for the jobs of a Wait for Callback batch, delivered by the test straight to the
 * execution's resume URL on that n8n: tests choose which callbacks come, and when. Each says the
 * job is done.
 */
export function handDelivered(n8n: N8nTestInstance, executionId: string) {
	const post = (jobId: string, row: number, sign: (body: string) => Record<string, string>): Promise<Response> => {
		const body = JSON.stringify({ id: jobId, status: 'done', resultUrls: [`https://cdn.example/${jobId}.mp4`] });
		// The URL the node gave the job (its resume token included, on n8n 2.14+), on the port n8n listens on.
		return fetch(n8n.callbackUrlOf(executionId, row, n8n.listeningUrl), {
			method: 'POST',
			headers: { 'content-type': 'application/json', ...sign(body) },
			body,
		});
	};
	return {
		/**
		 * Signed as the service signs them, with a webhook-id of its own (a new message, not a
		 * redelivery). `now` is the clock the node checks the timestamp on (a sandbox's, when the node keeps it).
		 */
		signed: (secret: string, now: () => number = Date.now) => (jobId: string, row: number) =>
			post(jobId, row, (body) => {
				const timestamp = Math.floor(now() / 1000);
				const id = `msg_${jobId}_${Math.random().toString(36).slice(2, 8)}`;
				return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': standardWebhookSignature(secret, id, timestamp, body) };
			}),
		/** Without a signature (a service that does not sign): the step confirms it by a lookup. */
		unsigned: (jobId: string, row: number) => post(jobId, row, () => ({})),
	};
}
