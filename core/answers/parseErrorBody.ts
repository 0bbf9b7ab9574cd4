import { firstString, isObject } from './answerFields';

const MAX_TEXT_MESSAGE = 200;

const ENTITIES: Record<string, string> = {
	amp: '&',
	lt: '<',
	gt: '>',
	quot: '"',
	'#39': "'",
	apos: "'",
	nbsp: ' ',
};

/**
 * Visible text of an HTML page: its title or first heading when it has one. Proxies and gateways
 * in front of an API answer errors with pages of their own.
 */
function textOfHtml(html: string): string {
	const pick = (tag: string) =>
		new RegExp(`<${tag}[^>]*>([\\s\\S]*?)</${tag}>`, 'i').exec(html)?.[1];
	const part =
		pick('title') ?? pick('h1') ?? html.replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, ' ');
	return part
		.replace(/<[^>]*>/g, ' ')
		.replace(/&(amp|lt|gt|quot|#39|apos|nbsp);/g, (_m, name: string) => {
			return ENTITIES[name];
		});
}

/** Control characters other than whitespace mean bytes, not words. */
function looksBinary(text: string): boolean {
	for (let i = 0; i < text.length; i++) {
		const code = text.charCodeAt(i);
		if (code < 0x20 && (code < 0x09 || code > 0x0d)) return true;
	}
	return false;
}

/** A short message from a text body; binary or empty bodies give none. */
function messageOfText(text: string): string | undefined {
	if (looksBinary(text)) return undefined;
	const words = (/<[a-z!/][^>]*>/i.test(text) ? textOfHtml(text) : text)
		.replace(/\s+/g, ' ')
		.trim();
	if (words === '') return undefined;
	const chars = [...words];
	return chars.length > MAX_TEXT_MESSAGE
		? `${chars.slice(0, MAX_TEXT_MESSAGE - 1).join('')}…`
		: words;
}

/** A JSON body delivered as text (wrong content type) is still read as JSON. */
function parseJsonText(text: string): unknown {
	const trimmed = text.trim();
	if (!trimmed.startsWith('{')) return undefined;
	try {
		return JSON.parse(trimmed) as unknown;
	} catch {
		return undefined;
	}
}

/**
 * Message, code and request id from any error body. `{ error: { code, message, requestId } }` was
 * decided (docs/api.md#errors); a plain string `error`, flat `message`/`code`, problem details'
 * `detail`/`title`/`type` and lists of errors are the other common API styles.
 */
export function parseErrorBody(body: unknown): {
	message?: string;
	code?: string;
	requestId?: string;
} {
	if (typeof body === 'string') {
		const json = parseJsonText(body);
		if (isObject(json)) return parseErrorBody(json);
		const message = messageOfText(body);
		return message ? { message } : {};
	}
	if (!isObject(body)) return {};
	const error = body.error;
	const nested = isObject(error) ? error : {};
	// JSON:API and GraphQL style: `{ errors: [{ message, code }] }`.
	const listed = Array.isArray(body.errors) && isObject(body.errors[0]) ? body.errors[0] : {};
	const result: { message?: string; code?: string; requestId?: string } = {};
	const message = firstString(
		nested.message,
		typeof error === 'string' ? error : undefined,
		body.message,
		body.detail,
		body.title,
		listed.message,
		listed.detail,
	);
	if (message) result.message = message.trim();
	const code = firstString(nested.code, body.code, body.type, listed.code);
	if (code) result.code = code.trim();
	// Without one here, errorFromResponse falls back to the X-Request-Id header.
	const requestId = firstString(
		nested.requestId,
		nested.request_id,
		body.requestId,
		body.request_id,
	);
	if (requestId) result.requestId = requestId.trim();
	return result;
}
