import type { HttpResponse, SendRequest, Transport } from './transport';
import { TransportFailure } from './errors';
import { settle } from './settle';

const MASK = '[redacted]';

/** Replaces every occurrence of the secrets in strings anywhere inside a JSON-like value. */
export function redactSecrets<T>(value: T, secrets: readonly string[]): T {
	const active = secrets.filter((s) => s.length >= 4);
	if (active.length === 0) return value;
	const scrub = (input: unknown): unknown => {
		if (typeof input === 'string') {
			return active.reduce((text, secret) => text.split(secret).join(MASK), input);
		}
		if (Array.isArray(input)) return input.map(scrub);
		if (input && typeof input === 'object' && !(input instanceof Uint8Array)) {
			const out: Record<string, unknown> = {};
			for (const [key, inner] of Object.entries(input)) out[key] = scrub(inner);
			return out;
		}
		return input;
	};
	return scrub(value) as T;
}

/**
 * Services sometimes echo the key back ("invalid key sk_…") in a body or header. Everything core
 * reads passes through here first, so an echoed key can never reach an error, a log or an item.
 */
export function redactingTransport(transport: Transport, secrets: readonly string[]): Transport {
	const wrap =
		(send: SendRequest): SendRequest =>
		async (request) => {
			const sent = await settle(send(request));
			if (!sent.ok) {
				const failure = sent.error;
				if (failure instanceof TransportFailure) {
					throw new TransportFailure(failure.failure, redactSecrets(failure.message, secrets));
				}
				throw failure;
			}
			const response: HttpResponse = sent.value;
			return {
				status: response.status,
				headers: redactSecrets(response.headers, secrets),
				body: redactSecrets(response.body, secrets),
			};
		};
	return { api: wrap(transport.api), plain: wrap(transport.plain) };
}
