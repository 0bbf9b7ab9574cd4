import type { Random } from '../http/transport';
import { createHash } from 'node:crypto';

/** A fresh key for one create, from the injected randomness (uniqueness matters, not secrecy). */
export function newIdempotencyKey(random: Random): string {
	let hex = '';
	for (let i = 0; i < 32; i++) hex += Math.floor(random() * 16).toString(16);
	return `idem_${hex}`;
}

/**
 * A stable key for one input item of one run, so that a platform's own retry of the same step
 * (n8n "Retry On Fail", a Zap replay) reuses it and the service can answer with the original job.
 */
export function derivedIdempotencyKey(...parts: Array<string | number>): string {
	const digest = createHash('sha256').update(parts.join('\u0000')).digest('hex');
	return `idem_${digest.slice(0, 32)}`;
}

/** A short, non-reversible name for an API key: shares limiters and labels logs without the key. */
export function keyFingerprint(apiKey: string, baseUrl: string): string {
	return createHash('sha256').update(`${baseUrl}\u0000${apiKey}`).digest('hex').slice(0, 16);
}

/**
 * JSON with sorted keys and undefined fields left out, so the same input gives the same text
 * whatever order its fields come in: what a derived key hashes.
 */
export function canonicalJson(value: unknown): string {
	if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
	if (value && typeof value === 'object') {
		const entries = Object.entries(value as Record<string, unknown>)
			.filter(([, v]) => v !== undefined)
			.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
		return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
	}
	return JSON.stringify(value ?? null);
}
