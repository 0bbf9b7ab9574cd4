import { createHmac, timingSafeEqual } from 'node:crypto';

/*
 * Standard Webhooks (docs/api.md#signatures): `webhook-signature` holds space-separated
 * `v1,<base64 HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<raw body>")>` entries, and the
 * key is the base64-decoded part of the `whsec_…` secret. The global Buffer is used because
 * node:crypto hands Buffers back and core may import nothing else.
 */

/** Standard Webhooks' default: deliveries further off are refused as replays. */
const DEFAULT_TOLERANCE_SECONDS = 300;

const SECRET_PREFIX = 'whsec_';

type Headers = Record<string, string | string[] | undefined>;

function secretKey(secret: string): Buffer {
	const trimmed = secret.trim();
	const encoded = trimmed.startsWith(SECRET_PREFIX) ? trimmed.slice(SECRET_PREFIX.length) : trimmed;
	return Buffer.from(encoded, 'base64');
}

/** Whether a callback carries a signature at all (signed or not is the service's choice, docs/api.md#signatures). */
export function carriesSignature(headers: Headers): boolean {
	return headerValue(headers, 'webhook-signature') !== undefined;
}

/** One header, by name in any case; repeated values are joined as the HTTP list they are. */
function headerValue(headers: Headers, name: string): string | undefined {
	for (const [key, value] of Object.entries(headers)) {
		if (key.toLowerCase() !== name || value === undefined) continue;
		const joined = (Array.isArray(value) ? value.join(' ') : value).trim();
		if (joined !== '') return joined;
	}
	return undefined;
}

function hmac(key: Buffer, webhookId: string, timestampSeconds: number, rawBody: string): Buffer {
	return createHmac('sha256', key).update(`${webhookId}.${timestampSeconds}.${rawBody}`).digest();
}

/** The `v1,<base64>` signature of one delivery (Standard Webhooks). */
export function signWebhook(
	secret: string,
	webhookId: string,
	timestampSeconds: number,
	rawBody: string,
): string {
	return `v1,${hmac(secretKey(secret), webhookId, timestampSeconds, rawBody).toString('base64')}`;
}

export type SignatureCheck =
	| { ok: true; webhookId: string; timestampSeconds: number }
	| { ok: false; reason: string };

/** Verifies a Standard Webhooks delivery: headers present, timestamp fresh, a v1 signature matching. */
export function verifyWebhookSignature(input: {
	secret: string;
	headers: Headers;
	rawBody: string;
	nowMs: number;
	toleranceSeconds?: number;
}): SignatureCheck {
	const key = typeof input.secret === 'string' ? secretKey(input.secret) : Buffer.alloc(0);
	// Anyone can compute an HMAC with an empty key: without a secret nothing can be verified.
	if (key.length === 0) {
		return { ok: false, reason: 'no webhook secret is set, so the signature cannot be checked' };
	}
	const id = headerValue(input.headers, 'webhook-id');
	const timestamp = headerValue(input.headers, 'webhook-timestamp');
	const signatures = headerValue(input.headers, 'webhook-signature');
	const missing = [
		id === undefined ? 'webhook-id' : undefined,
		timestamp === undefined ? 'webhook-timestamp' : undefined,
		signatures === undefined ? 'webhook-signature' : undefined,
	].filter((name): name is string => name !== undefined);
	if (id === undefined || timestamp === undefined || signatures === undefined) {
		return {
			ok: false,
			reason: `the ${missing.join(', ')} header${missing.length > 1 ? 's are' : ' is'} missing: the callback is not signed`,
		};
	}
	const seconds = Number(timestamp);
	if (!/^\d+$/.test(timestamp) || !Number.isSafeInteger(seconds)) {
		return {
			ok: false,
			reason: `the webhook-timestamp header "${timestamp.slice(0, 40)}" is not a Unix time in seconds`,
		};
	}
	const tolerance =
		input.toleranceSeconds !== undefined && input.toleranceSeconds >= 0
			? input.toleranceSeconds
			: DEFAULT_TOLERANCE_SECONDS;
	const age = Math.floor(input.nowMs / 1000) - seconds;
	if (age > tolerance) {
		return {
			ok: false,
			reason: `the delivery is ${age} s old, more than the ${tolerance} s allowed (a late or replayed callback; if every callback fails this way, check this machine's clock)`,
		};
	}
	if (age < -tolerance) {
		return {
			ok: false,
			reason: `the delivery is dated ${-age} s in the future, more than the ${tolerance} s allowed (check this machine's clock)`,
		};
	}

	const expected = hmac(key, id, seconds, input.rawBody);
	let sawV1 = false;
	for (const entry of signatures.split(/\s+/)) {
		const comma = entry.indexOf(',');
		if (comma < 0 || entry.slice(0, comma) !== 'v1') continue;
		sawV1 = true;
		const given = Buffer.from(entry.slice(comma + 1), 'base64');
		// timingSafeEqual needs equal lengths; the length of a MAC is no secret.
		if (given.length === expected.length && timingSafeEqual(given, expected)) {
			return { ok: true, webhookId: id, timestampSeconds: seconds };
		}
	}
	return {
		ok: false,
		reason: sawV1
			? 'no signature matches the body: the webhook secret may be wrong, or the body was altered'
			: 'the webhook-signature header holds no v1 signature',
	};
}
