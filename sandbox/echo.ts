/**
 * The forms in which a careless service quotes a caller's key back (scenario `echo-key`): each
 * turns the key into the text that appears in the answer.
 */
const jsonUnicode = (key: string) => [...key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');

export const ECHO_ENCODINGS = {
	literal: (key: string) => key,
	url: (key: string) => encodeURIComponent(key),
	'url-lower': (key: string) => encodeURIComponent(key).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
	'url-twice': (key: string) => encodeURIComponent(encodeURIComponent(key)),
	form: (key: string) => new URLSearchParams({ k: key }).toString().slice(2),
	base64: (key: string) => Buffer.from(key).toString('base64'),
	base64url: (key: string) => Buffer.from(key).toString('base64url'),
	'bearer-base64': (key: string) => Buffer.from(`Bearer ${key}`).toString('base64'),
	'bearer-base64url': (key: string) => Buffer.from(`Bearer ${key}`).toString('base64url'),
	'basic-auth': (key: string) => Buffer.from(`api:${key}`).toString('base64'),
	'json-slash': (key: string) => key.replace(/\//g, '\\/'),
	'json-unicode': jsonUnicode,
	html: (key: string) => [...key].map((c) => `&#${c.charCodeAt(0)};`).join(''),
	hex: (key: string) => Buffer.from(key).toString('hex'),
	query: (key: string) => `https://api.omni-video.example/v1/keys?api_key=${encodeURIComponent(key)}&scope=jobs`,
} as const;

export type EchoEncoding = keyof typeof ECHO_ENCODINGS;

export function isEchoEncoding(name: string | undefined): name is EchoEncoding {
	return name !== undefined && Object.prototype.hasOwnProperty.call(ECHO_ENCODINGS, name);
}
