import { createHmac, timingSafeEqual } from 'node:crypto';

/** Standard Webhooks' default tolerance: older or newer deliveries are refused as replays. */
const DEFAULT_TOLERANCE_SECONDS = 300;

function secretKey(secret: string): Buffer {
	const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
	return Buffer.from(encoded, 'base64');
}

function headerValue(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
	for (const [key, value] of Object.entries(headers)) {
		if (key.toLowerCase() !== name) continue;
		return Array.isArray(value) ? value.join(' ') : value;
	}
	return undefined;
}

/** The `v1,<base64>` signature of one delivery (Standard Webhooks). */
export function signWebhook(secret: string, webhookId: string, timestampSeconds: number, rawBody: string): string {
	const digest = createHmac('sha256', secretKey(secret))
		.update(`${webhookId}.${timestampSeconds}.${rawBody}`)
		.digest('base64');
	return `v1,${digest}`;
}

export type SignatureCheck =
	| { ok: true; webhookId: string; timestampSeconds: number }
	| { ok: false; reason: string };

/** Verifies a Standard Webhooks delivery: headers present, timestamp fresh, one v1 signature matching. */
export function verifyWebhookSignature(input: {
	secret: string;
	headers: Record<string, string | string[] | undefined>;
	rawBody: string;
	nowMs: number;
	toleranceSeconds?: number;
}): SignatureCheck {
	const id = headerValue(input.headers, 'webhook-id');
	const timestamp = headerValue(input.headers, 'webhook-timestamp');
	const signatures = headerValue(input.headers, 'webhook-signature');
	if (!id || !timestamp || !signatures) {
		return { ok: false, reason: 'the webhook-id, webhook-timestamp and webhook-signature headers are required' };
	}
	const seconds = Number(timestamp);
	if (!/^\d+$/.test(timestamp.trim()) || !Number.isSafeInteger(seconds)) {
		return { ok: false, reason: 'the webhook-timestamp is not a Unix time in seconds' };
	}
	const tolerance = input.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
	const drift = Math.floor(input.nowMs / 1000) - seconds;
	if (drift > tolerance) return { ok: false, reason: 'the delivery is too old (possible replay)' };
	if (drift < -tolerance) return { ok: false, reason: 'the delivery is dated in the future' };

	const expected = Buffer.from(signWebhook(input.secret, id, seconds, input.rawBody).slice(3), 'base64');
	for (const candidate of signatures.split(' ')) {
		const [version, value] = candidate.split(',', 2);
		if (version !== 'v1' || !value) continue;
		const given = Buffer.from(value, 'base64');
		if (given.length === expected.length && timingSafeEqual(given, expected)) {
			return { ok: true, webhookId: id, timestampSeconds: seconds };
		}
	}
	return { ok: false, reason: 'no signature matches the body (wrong secret or altered body)' };
}
