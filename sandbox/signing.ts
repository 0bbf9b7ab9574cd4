import { createHmac } from 'node:crypto';

/**
 * The sandbox's own Standard Webhooks signer, written apart from core's verifier on purpose:
 * each checks the other, and both are pinned by the test vector of docs/api.md#signatures.
 */
export function standardWebhookSignature(secret: string, id: string, timestamp: number, body: string): string {
	const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
	return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}
