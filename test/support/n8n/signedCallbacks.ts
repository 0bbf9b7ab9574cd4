import { standardWebhookSignature } from '../../../sandbox/signing';
import type { N8nTestInstance } from './instance';

/** Where a test n8n listens (its resume URLs may name an address that goes nowhere). */
export function listeningUrl(n8n: N8nTestInstance): string {
	return `http://127.0.0.1:${(n8n as unknown as { server: { address(): { port: number } } }).server.address().port}`;
}

/**
 * A callback for a job of a Wait for Callback batch, signed as the service signs them, delivered
 * straight to the execution's resume URL on that n8n: tests choose which callbacks come, and when.
 * Each delivery has a webhook-id of its own (a new message, not a redelivery). `now` is the clock
 * the node checks the signature's timestamp on (a sandbox's, when the node keeps it).
 */
export function deliverSigned(n8n: N8nTestInstance, executionId: string, secret: string, now: () => number = Date.now) {
	return (jobId: string, row: number, status = 'done'): Promise<Response> => {
		const body = JSON.stringify({ id: jobId, status, resultUrls: [`https://cdn.example/${jobId}.mp4`] });
		const timestamp = Math.floor(now() / 1000);
		const id = `msg_${jobId}_${Math.random().toString(36).slice(2, 8)}`;
		return fetch(`${listeningUrl(n8n)}/webhook-waiting/${executionId}/omni-video?row=${row}`, {
			method: 'POST',
			headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': standardWebhookSignature(secret, id, timestamp, body) },
			body,
		});
	};
}
