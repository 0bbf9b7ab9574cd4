import { firstNumber } from './answerFields';

/** Epoch values below this are seconds (until the year 5138); above, milliseconds. */
const SECONDS_LIMIT = 1e11;

/**
 * ISO 8601, epoch seconds or epoch milliseconds, to ISO 8601 UTC; anything else to undefined.
 * ISO 8601 is specified; epoch numbers are common in webhook bodies (the signature test vector
 * of docs/api.md#signatures carries milliseconds).
 */
export function parseTimestamp(value: unknown): string | undefined {
	let ms: number | undefined;
	const numeric = firstNumber(value);
	if (value instanceof Date) ms = value.getTime();
	else if (numeric !== undefined) ms = numeric < SECONDS_LIMIT ? numeric * 1000 : numeric;
	else if (typeof value === 'string') {
		const text = value.trim();
		// A date-time without a zone would be read as local time; the spec's times are UTC.
		const zoneless = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(text);
		ms = Date.parse(zoneless ? `${text.replace(' ', 'T')}Z` : text);
	}
	if (ms === undefined || !Number.isFinite(ms)) return undefined;
	const date = new Date(ms);
	// Beyond ±8.64e15 ms the Date is invalid and toISOString would throw.
	return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}
