import { TransportError } from '../errors/errors';

/*
 * Reading the fields of the service's answers, liberally (docs/api.md#tolerated-spellings): every
 * spelling listed there is accepted, unknown fields are ignored, and only an answer with nothing
 * usable in it is an error. Each alternative, here and in the parsers, says why it is accepted.
 */

export type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function firstString(...values: unknown[]): string | undefined {
	for (const value of values) if (typeof value === 'string' && value.trim() !== '') return value;
	return undefined;
}

// Numeric strings too: some services send every field as text.
export function firstNumber(...values: unknown[]): number | undefined {
	for (const value of values) {
		const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
		if (typeof number === 'number' && Number.isFinite(number)) return number;
	}
	return undefined;
}

/** An answer with nothing usable in it. */
export function malformed(what: string, jobId?: string): TransportError {
	return new TransportError(
		`The Omni Video API answered, but its ${what} could not be read. Run again; if this keeps happening, the service may have changed its format: contact Omni Video support.`,
		'malformed',
		{ code: 'malformed_response', jobId },
	);
}

/** `id` is specified; `jobId` and `job_id` are what services call it beside other fields. */
export function idOf(job: Json): string | undefined {
	const id = firstString(job.id, job.jobId, job.job_id);
	if (id !== undefined) return id.trim();
	// Ids are opaque: a numeric one is read as its text.
	const numeric = [job.id, job.jobId, job.job_id].find(
		(v): v is number => typeof v === 'number' && Number.isFinite(v),
	);
	return numeric === undefined ? undefined : String(numeric);
}

/** The object itself, whether sent bare or in the `{ data }` or `{ job }` envelope many APIs use. */
export function unwrap(body: unknown): Json | undefined {
	if (!isObject(body)) return undefined;
	if (idOf(body) !== undefined || typeof body.status === 'string') return body;
	for (const key of ['data', 'job']) {
		const inner = body[key];
		if (isObject(inner)) return inner;
	}
	return body;
}
