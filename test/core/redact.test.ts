import { redactSecrets } from '../../core/http/redact';

const KEY = 'sk_live+Ab/9xY=z w==';

const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
const base64url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
const jsonUnicode = (text: string) =>
	[...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');

/** Every form the key takes in the echoes the redactor must catch. */
const ENCODINGS: Record<string, string> = {
	literal: KEY,
	encodeURIComponent: encodeURIComponent(KEY),
	'lower-case percent': encodeURIComponent(KEY).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
	'form encoding': new URLSearchParams({ k: KEY }).toString().slice(2),
	'encoded twice': encodeURIComponent(encodeURIComponent(KEY)),
	encodeURI: encodeURI(KEY),
	base64: base64(KEY),
	base64url: base64url(KEY),
	'base64 of Bearer <key>': base64(`Bearer ${KEY}`),
	'base64url of Bearer <key>': base64url(`Bearer ${KEY}`),
	'base64 of user:<key>': base64(`user:${KEY}`),
	'base64 of a JSON document': base64(JSON.stringify({ auth: KEY })),
	'JSON with \\/': JSON.stringify(KEY).slice(1, -1).replace(/\//g, '\\/'),
	'JSON \\u escapes': jsonUnicode(KEY),
	'HTML references': [...KEY].map((c) => `&#${c.charCodeAt(0)};`).join(''),
	hex: Buffer.from(KEY).toString('hex'),
	'HEX upper case': Buffer.from(KEY).toString('hex').toUpperCase(),
	'URL query string': `https://api.example.com/v1/jobs?api_key=${encodeURIComponent(KEY)}&x=1`,
	'form-encoded query string': `https://cdn.example.com/a.mp4?${new URLSearchParams({ token: KEY, sig: 'abc' })}`,
};

/** Whether any recognisable piece of the key survives in the text. */
function leaks(text: string): boolean {
	const pieces = Object.values(ENCODINGS).filter((e) => !e.startsWith('https://'));
	return pieces.some((piece) => text.includes(piece)) || text.includes('Ab/9xY') || text.includes('Ab%2F9xY');
}

describe('redactSecrets masks the key in every common encoding', () => {
	it.each(Object.entries(ENCODINGS))('%s', (_name, encoded) => {
		const echoed = { error: { message: `Key "${encoded}" is not allowed here.`, [encoded]: [encoded] } };
		const out = redactSecrets(echoed, [KEY]);
		const text = JSON.stringify(out);
		expect(leaks(text)).toBe(false);
		expect(text).toContain('[redacted]');
		expect(out.error.message.startsWith('Key "')).toBe(true);
	});

	it('leaves text without the key as it was, URL signatures included', () => {
		const ticket = {
			uploadUrl: 'https://storage.example.com/u/upl_1?expires=1700000000&signature=Zm9vYmFyYmF6cXV4+/=',
			message: 'sk_live is a prefix, Ab/9 is not the key, base64 QUJD and hex 41424344 are not it either',
		};
		expect(redactSecrets(ticket, [KEY])).toEqual(ticket);
	});

	it('ignores secrets too short to mask safely', () => {
		expect(redactSecrets('abc and abc', ['abc'])).toBe('abc and abc');
	});
});
