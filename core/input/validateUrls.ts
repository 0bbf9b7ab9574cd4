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

/** IPv4 ranges no one on the internet can reach: loopback, private, link-local, carrier-grade NAT. */
const NON_PUBLIC_IPV4: ReadonlyArray<[number, number]> = [
	[0x7f000000, 8], // 127.0.0.0/8
	[0x0a000000, 8], // 10.0.0.0/8
	[0xac100000, 12], // 172.16.0.0/12
	[0xc0a80000, 16], // 192.168.0.0/16
	[0xa9fe0000, 16], // 169.254.0.0/16
	[0x64400000, 10], // 100.64.0.0/10
	[0x00000000, 8], // 0.0.0.0/8
];
/** Names that resolve only inside a machine or a local network (mDNS, home routers, cloud VPCs). */
const LOCAL_NAME = /(^|\.)(localhost|local|internal|lan|home\.arpa|intranet|corp)$/i;

function isNonPublicHost(hostname: string): boolean {
	const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
	const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
	if (v4) {
		const address = v4.slice(1).reduce((sum, part) => sum * 256 + Number(part), 0);
		return NON_PUBLIC_IPV4.some(([base, bits]) => Math.floor(address / 2 ** (32 - bits)) === Math.floor(base / 2 ** (32 - bits)));
	}
	if (host.includes(':')) return host === '::1' || host === '::' || /^f[cd]/.test(host) || /^fe[89ab]/.test(host);
	// A name without a dot is a machine on the local network (or this one).
	return !host.includes('.') || LOCAL_NAME.test(host);
}

/**
 * Why the service could not call this address back, in the user's words, or undefined when it
 * can: a job's callback must be a public https:// address (or, for the local sandbox only, plain
 * http on this machine). A host that can pause a step until a callback asks this first, and waits
 * by polling when there is a reason (a self-hosted n8n or Activepieces on localhost, a private
 * network or plain http cannot be called back).
 */
export function callbackUrlProblem(url: unknown, options: { allowInsecureLoopbackCallback?: boolean } = {}): string | undefined {
	const text = typeof url === 'string' ? url.trim() : '';
	const parsed = absoluteUrl(text, ['https:', 'http:']);
	if (!parsed) return `the resume URL (${describe(url)}) is not a full http(s) address`;
	const loopback = LOOPBACK_HOSTS.has(parsed.hostname);
	if (parsed.protocol === 'http:') {
		if (options.allowInsecureLoopbackCallback && loopback) return undefined;
		return `the resume URL ${parsed.origin} is plain http://, and Omni Video calls back only over https://`;
	}
	if (isNonPublicHost(parsed.hostname)) {
		return `the resume URL ${parsed.origin} is not reachable from the internet (a local or private address), so Omni Video could not call it back`;
	}
	return undefined;
}

/** Whether the service could call this address back (see callbackUrlProblem). */
export function isAcceptedCallbackUrl(url: unknown, options: { allowInsecureLoopbackCallback?: boolean } = {}): boolean {
	return !isBlank(url) && callbackUrlProblem(url, options) === undefined;
}
