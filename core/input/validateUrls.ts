import type { FieldProblem } from '../errors/errors';
import { describe, isBlank } from './fieldProblems';
import { LOOPBACK_HOSTS, MAX_URL_CHARS } from './inputLimits';

/** An absolute URL with one of the schemes given, or undefined. */
function absoluteUrl(value: string, schemes: readonly string[]): URL | undefined {
	// `new URL('https:host')` is accepted by the parser; the service wants the full form.
	if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return undefined;
	let url: URL;
	try {
		url = new URL(value);
	} catch {
		return undefined;
	}
	return schemes.includes(url.protocol) && url.hostname !== '' ? url : undefined;
}

/** A URL past MAX_URL_CHARS is reported once, without the parse errors that would follow. */
function isTooLong(field: string, value: unknown, what: string, problems: FieldProblem[]): boolean {
	if (typeof value !== 'string' || value.length <= MAX_URL_CHARS) return false;
	const label = { imageUrl: 'Image URL', videoUrl: 'Video URL', callbackUrl: 'Callback URL' }[field] ?? field;
	problems.push({
		field,
		value,
		message: `${label} must be ${what} of at most ${MAX_URL_CHARS} characters (got ${value.length}): pass an address, such as the file URL from Upload Image, not a file's content.`,
	});
	return true;
}

/** The image or video to start from: a full http(s) address, trimmed; blank gives undefined. */
export function checkSourceUrl(
	field: 'imageUrl' | 'videoUrl',
	value: unknown,
	problems: FieldProblem[],
): string | undefined {
	if (isBlank(value)) return undefined;
	const label = field === 'imageUrl' ? 'Image URL' : 'Video URL';
	const source = field === 'imageUrl' ? 'image' : 'video';
	if (isTooLong(field, value, `a link to the ${source}`, problems)) return undefined;
	if (typeof value === 'string' && absoluteUrl(value.trim(), ['https:', 'http:'])) {
		return value.trim();
	}
	problems.push({
		field,
		value,
		message: `${label} must be a full http:// or https:// address of the ${source}, such as the file URL from Upload Image (got ${describe(value)}).`,
	});
	return undefined;
}

/** Where the service posts the outcome: https, or http on this machine when the caller allows it. */
export function checkCallbackUrl(
	value: unknown,
	allowLoopbackHttp: boolean,
	problems: FieldProblem[],
): string | undefined {
	if (isBlank(value)) return undefined;
	if (isTooLong('callbackUrl', value, 'an address', problems)) return undefined;
	if (typeof value === 'string') {
		const url = absoluteUrl(value.trim(), ['https:', 'http:']);
		const loopback = url !== undefined && LOOPBACK_HOSTS.has(url.hostname);
		if (url && (url.protocol === 'https:' || (allowLoopbackHttp && loopback))) return value.trim();
	}
	const alternative = allowLoopbackHttp
		? ', or an http:// address on this machine (localhost)'
		: '';
	problems.push({
		field: 'callbackUrl',
		value,
		message: `Callback URL must be a full https:// address that the Omni Video service can reach${alternative} (got ${describe(value)}).`,
	});
	return undefined;
}

/**
 * Whether the service would take this address as a job's callback URL (the rule of
 * checkCallbackUrl): a host that can pause a step until a callback asks this first, and waits
 * by polling when the answer is no (a self-hosted instance on plain http cannot be called back).
 */
export function isAcceptedCallbackUrl(url: unknown, options: { allowInsecureLoopbackCallback?: boolean } = {}): boolean {
	if (isBlank(url)) return false;
	const problems: FieldProblem[] = [];
	checkCallbackUrl(url, options.allowInsecureLoopbackCallback ?? false, problems);
	return problems.length === 0;
}
