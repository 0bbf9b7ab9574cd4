import type { HttpResponse, SendRequest, Transport } from './transport';
import { TransportFailure } from '../errors/errors';
import { settle } from '../settle';

const MASK = '[redacted]';
const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

function escapeRegExp(text: string): string {
	return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** UTF-8 bytes without TextEncoder or Buffer (core runs on hosts that may lack both). */
function utf8(text: string): number[] {
	const bytes: number[] = [];
	for (const char of text) {
		const code = char.codePointAt(0) as number;
		if (code < 0x80) bytes.push(code);
		else for (const hex of encodeURIComponent(char).split('%').slice(1)) bytes.push(parseInt(hex, 16));
	}
	return bytes;
}

/**
 * One character of the secret in any of the forms services and libraries write it: as is,
 * percent-encoded (either case, or twice), as `+` for a space (form encoding), JSON-escaped
 * (`\/`, `\u002b`) or as an HTML character reference.
 */
function charPattern(char: string): string {
	const code = char.codePointAt(0) as number;
	const options = [escapeRegExp(char)];
	const percent = utf8(char)
		.map((byte) => `%(?:25)?${byte.toString(16).padStart(2, '0').split('').map(caseless).join('')}`)
		.join('');
	options.push(percent);
	if (char === ' ') options.push('\\+');
	if (char === '/') options.push('\\\\/');
	if (code <= 0xffff) options.push(`\\\\u${code.toString(16).padStart(4, '0').split('').map(caseless).join('')}`);
	options.push(`&#(?:0*${code}|[xX]0*${code.toString(16).split('').map(caseless).join('')});`);
	return `(?:${options.join('|')})`;
}

function caseless(digit: string): string {
	return /[a-f]/.test(digit) ? `[${digit}${digit.toUpperCase()}]` : digit;
}

/**
 * The part of the base64 text of `bytes` that does not depend on what surrounds them, for each of
 * the three ways they can fall on base64's 3-byte grid. So "Bearer <key>", "user:<key>" or a whole
 * JSON document holding the key, base64-encoded, all contain one of these.
 */
function base64Cores(bytes: number[]): string[] {
	const cores: string[] = [];
	for (let shift = 0; shift < 3; shift++) {
		const bits: number[] = [];
		for (const byte of [...new Array<number>(shift).fill(0), ...bytes]) {
			for (let bit = 7; bit >= 0; bit--) bits.push((byte >> bit) & 1);
		}
		let core = '';
		for (let start = 0; start + 6 <= bits.length; start += 6) {
			// Only characters made of the secret's bits alone.
			if (start < shift * 8) continue;
			core += BASE64[parseInt(bits.slice(start, start + 6).join(''), 2)];
		}
		cores.push(core);
	}
	return cores;
}

/** A regular expression matching the secret in every encoding a service might echo it in. */
function secretPattern(secret: string): string {
	const textual = [...secret].map(charPattern).join('');
	const encoded = base64Cores(utf8(secret))
		.filter((core) => core.length >= 4)
		.flatMap((core) => [core, core.replace(/\+/g, '-').replace(/\//g, '_')])
		.map((core) => `[A-Za-z0-9+/_-]{0,3}${escapeRegExp(core)}[A-Za-z0-9+/_=-]{0,3}`);
	// Hex, as a few debugging endpoints print credentials.
	const hex = utf8(secret)
		.map((byte) => byte.toString(16).padStart(2, '0'))
		.join('');
	return [textual, ...encoded, hex.split('').map(caseless).join('')].join('|');
}

/** A function masking the secrets, in any encoding, in one string. */
export function secretScrubber(secrets: readonly string[]): (text: string) => string {
	const active = secrets.filter((s) => s.length >= 4);
	if (active.length === 0) return (text) => text;
	const pattern = new RegExp(active.map(secretPattern).join('|'), 'g');
	return (text) => text.replace(pattern, MASK);
}

/**
 * Replaces every occurrence of the secrets, in any common encoding (URL and form encoding,
 * JSON escapes, base64 and base64url, hex), in strings and object keys anywhere inside a
 * JSON-like value.
 */
export function redactSecrets<T>(value: T, secrets: readonly string[]): T {
	return scrubValue(value, secretScrubber(secrets));
}

function scrubValue<T>(value: T, scrubText: (text: string) => string): T {
	const scrub = (input: unknown): unknown => {
		if (typeof input === 'string') return scrubText(input);
		if (Array.isArray(input)) return input.map(scrub);
		if (input && typeof input === 'object' && !(input instanceof Uint8Array)) {
			const out: Record<string, unknown> = {};
			for (const [key, inner] of Object.entries(input)) out[scrubText(key)] = scrub(inner);
			return out;
		}
		return input;
	};
	return scrub(value) as T;
}

/**
 * Services sometimes echo the key back ("invalid key sk_…") in a body or header, in any encoding.
 * Everything core reads passes through here first, so an echoed key can never reach an error, a
 * log or an item.
 */
export function redactingTransport(transport: Transport, secrets: readonly string[]): Transport {
	const scrubText = secretScrubber(secrets);
	const wrap =
		(send: SendRequest): SendRequest =>
		async (request) => {
			const sent = await settle(send(request));
			if (!sent.ok) {
				const failure = sent.error;
				if (failure instanceof TransportFailure) {
					throw new TransportFailure(failure.failure, scrubText(failure.message), failure.code);
				}
				throw failure;
			}
			const response: HttpResponse = sent.value;
			return {
				status: response.status,
				headers: scrubValue(response.headers, scrubText),
				body: scrubValue(response.body, scrubText),
			};
		};
	return { api: wrap(transport.api), plain: wrap(transport.plain) };
}
