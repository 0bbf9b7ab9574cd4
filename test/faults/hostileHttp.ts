/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test tooling, never shipped */
import net from 'node:net';

/** One raw request, written to the socket byte for byte: what no HTTP client library would send. */
export interface RawRequest {
	name: string;
	/** The request head and body; `{KEY}` becomes a valid key. */
	raw: string | Buffer;
}

const head = (line: string, headers: string[] = [], body = '') =>
	[line, 'Host: 127.0.0.1', 'Connection: close', ...headers, ...(body ? [`Content-Length: ${Buffer.byteLength(body)}`] : []), '', body].join('\r\n');
const auth = 'Authorization: Bearer {KEY}';
const json = 'Content-Type: application/json';
const post = (path: string, body: string, headers: string[] = [auth, json]) => head(`POST ${path} HTTP/1.1`, headers, body);
const get = (path: string, headers: string[] = [auth]) => head(`GET ${path} HTTP/1.1`, headers);

export const HOSTILE_REQUESTS: RawRequest[] = [
	{ name: 'job id with a truncated UTF-8 escape', raw: get('/api/v1/jobs/%E0%A4%A') },
	{ name: 'job id ending in %', raw: get('/api/v1/jobs/job_%') },
	{ name: 'job id that is only %', raw: get('/api/v1/jobs/%') },
	{ name: 'job id %ZZ', raw: get('/api/v1/jobs/%ZZ') },
	{ name: 'job id with an encoded NUL', raw: get('/api/v1/jobs/job_%00') },
	{ name: 'CDN path with a broken escape', raw: get('/omni/user_x/%E0%A4%A/output.mp4', []) },
	{ name: 'file path with a broken escape', raw: get('/files/%ZZ/a.png', []) },
	{ name: 'upload PUT with a broken escape', raw: head('PUT /__uploads/%E0%A4%A?signature=x HTTP/1.1', ['Content-Type: image/png'], 'abc') },
	{ name: 'absolute-form target to another host', raw: get('http://evil.example/api/v1/jobs/x') },
	{ name: 'asterisk target', raw: head('OPTIONS * HTTP/1.1') },
	{ name: 'unknown method', raw: head('BREW /api/v1/generate HTTP/1.1', [auth]) },
	{ name: 'create as text/plain', raw: post('/api/v1/generate', '{"model":"omni-video","prompt":"a fox"}', [auth, 'Content-Type: text/plain']) },
	{ name: 'create as form', raw: post('/api/v1/generate', 'model=omni-video&prompt=a+fox', [auth, 'Content-Type: application/x-www-form-urlencoded']) },
	{ name: 'create with truncated JSON', raw: post('/api/v1/generate', '{"model":') },
	{ name: 'create with JSON null', raw: post('/api/v1/generate', 'null') },
	{ name: 'create with a JSON array', raw: post('/api/v1/generate', '[1,2,3]') },
	{ name: 'create with a JSON string', raw: post('/api/v1/generate', '"a fox"') },
	{ name: 'create with deeply nested JSON', raw: post('/api/v1/generate', '['.repeat(100_000) + ']'.repeat(100_000)) },
	{ name: 'create with __proto__', raw: post('/api/v1/generate', '{"__proto__":{"admin":true},"model":"omni-video","prompt":"a fox"}') },
	{ name: 'create with constructor.prototype', raw: post('/api/v1/generate', '{"constructor":{"prototype":{"x":1}},"model":"omni-video","prompt":"a"}') },
	{ name: 'create with invalid UTF-8', raw: Buffer.concat([Buffer.from(post('/api/v1/generate', '{"model":"omni-video","prompt":"XX"}').slice(0, -4)), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]) },
	{ name: 'create with a 2 MB body', raw: post('/api/v1/generate', JSON.stringify({ model: 'omni-video', prompt: 'a'.repeat(2 * 1024 * 1024) })) },
	{ name: 'create with prompt as number', raw: post('/api/v1/generate', '{"model":"omni-video","prompt":5}') },
	{ name: 'create with duration 1e308', raw: post('/api/v1/generate', '{"model":"omni-video","prompt":"a","duration":1e308}') },
	{ name: 'create with a callback to file://', raw: post('/api/v1/generate', '{"model":"omni-video","prompt":"a","callbackUrl":"file:///etc/passwd"}') },
	{ name: 'create with a 10 KB idempotency key', raw: post('/api/v1/generate', '{"model":"omni-video","prompt":"a","duration":99}', [auth, json, `Idempotency-Key: ${'k'.repeat(10_000)}`]) },
	{ name: 'upload ticket with size -1', raw: post('/api/upload', '{"filename":"a.png","contentType":"image/png","size":-1}') },
	{ name: 'upload ticket with a huge size', raw: post('/api/upload', '{"filename":"a.png","contentType":"image/png","size":1e308}') },
	{ name: 'upload ticket with a path in the name', raw: post('/api/upload', '{"filename":"../../etc/passwd","contentType":"image/png","size":3}') },
	{ name: 'empty bearer', raw: get('/api/v1/jobs/job_x', ['Authorization: Bearer ']) },
	{ name: 'basic auth', raw: get('/api/v1/jobs/job_x', ['Authorization: Basic dXNlcjpwYXNz']) },
	{ name: 'an 8 KB key', raw: get('/api/v1/jobs/job_x', [`Authorization: Bearer ${'k'.repeat(8000)}`]) },
	{ name: 'a scenario header of garbage', raw: get('/api/v1/jobs/job_x', [auth, 'X-Sandbox-Scenario: ,,,;;;\u0001'.replace('\u0001', '')]) },
	{ name: 'a Range of letters on the CDN', raw: get('/omni/user_premium/job_x/output.mp4', ['Range: bytes=abc']) },
	{ name: 'admin keys with truncated JSON', raw: post('/__sandbox/keys', '{"key":', [json]) },
	{ name: 'admin keys with null', raw: post('/__sandbox/keys', 'null', [json]) },
	{ name: 'admin keys for an unknown account', raw: post('/__sandbox/keys', '{"key":"omni_hostile","account":"acct_nobody"}', [json]) },
	{ name: 'admin keys without a key', raw: post('/__sandbox/keys', '{"account":"acct_pro"}', [json]) },
	{ name: 'admin clock with truncated JSON', raw: post('/__sandbox/clock', '{"speed":', [json]) },
	{ name: 'admin clock advanced by 1e308 ms', raw: post('/__sandbox/clock', '{"advanceMs":1e308}', [json]) },
	{ name: 'admin clock at speed 1e308', raw: post('/__sandbox/clock', '{"speed":1e308}', [json]) },
	{ name: 'admin unknown route', raw: post('/__sandbox/drop-tables', '{}', [json]) },
	{ name: 'a body longer than its Content-Length', raw: head('POST /api/v1/generate HTTP/1.1', [auth, json, 'Content-Length: 5'], '{"model":"omni-video"}') },
	{ name: 'a broken chunked body', raw: head('POST /api/v1/generate HTTP/1.1', [auth, json, 'Transfer-Encoding: chunked'], 'zz\r\n{}\r\n0\r\n\r\n') },
	{ name: 'two Content-Length headers', raw: head('POST /api/v1/generate HTTP/1.1', [auth, json, 'Content-Length: 2', 'Content-Length: 3'], '{}') },
	{ name: 'a header without a colon', raw: head('GET /api/v1/jobs/x HTTP/1.1', [auth, 'NoColonHere']) },
	{ name: 'a 64 KB header', raw: get('/api/v1/jobs/x', [auth, `X-Big: ${'b'.repeat(64 * 1024)}`]) },
	{ name: 'HTTP/0.9 style request', raw: 'GET /api/v1/jobs/x\r\n\r\n' },
	{ name: 'garbage bytes', raw: Buffer.from([0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03, 0x0d, 0x0a, 0x0d, 0x0a]) },
];

/** Sends one raw request and resolves with the status of the answer, or undefined when none came. */
export function sendRaw(host: string, port: number, raw: string | Buffer): Promise<number | undefined> {
	return new Promise((resolve) => {
		const socket = net.connect(port, host);
		let received = '';
		const done = () => {
			const match = received.match(/^HTTP\/1\.[01] (\d{3})/);
			resolve(match ? Number(match[1]) : undefined);
		};
		socket.setTimeout(5_000, () => socket.destroy());
		socket.on('data', (chunk: Buffer) => {
			received += chunk.toString('latin1');
			// The status line is all that counts; later bytes (a huge answer) are not needed.
			if (/\r\n/.test(received)) socket.destroy();
		});
		socket.on('error', () => undefined);
		socket.on('close', done);
		socket.write(raw);
	});
}
