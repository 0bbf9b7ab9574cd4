/* eslint-disable @n8n/community-nodes/no-restricted-imports -- a test of the end-to-end harness, never shipped */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { N8nServer } from './n8nServer';

/*
 * The harness's REST session as n8n keeps it: a session is bound to the browser id that logged in,
 * so a new client (the soak's n8n after an upgrade) sent with the old cookie gets it back emptied.
 */
let server: Server;
let url = '';
const sessions = new Map<string, string>();

beforeAll(async () => {
	server = createServer((req, res) => {
		const browser = String(req.headers['browser-id']);
		const cookie = /n8n-auth=([^;]+)/.exec(String(req.headers.cookie ?? ''))?.[1];
		if (req.url === '/rest/login') {
			const token = `session-${sessions.size + 1}`;
			sessions.set(token, browser);
			res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': `n8n-auth=${token}; Path=/; HttpOnly` }).end('{"data":{}}');
		} else if (cookie !== undefined && sessions.get(cookie) === browser) {
			res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{"ok":true}}');
		} else {
			res.writeHead(401, { 'content-type': 'application/json', 'set-cookie': 'n8n-auth=; Max-Age=0; Path=/' }).end('{"message":"Unauthorized"}');
		}
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

it("a new client sent with another client's session is refused by n8n, not by a crash of the harness, and logs in to a session of its own", async () => {
	const before = new N8nServer('2.41.1', url, '/tmp', {});
	await before.logIn();
	await expect(before.rest('GET', '/settings')).resolves.toEqual({ ok: true });

	const after = new N8nServer('2.41.1', url, '/tmp', {});
	after.cookie = before.cookie;
	await expect(after.rest('GET', '/settings')).rejects.toThrow(/401/);
	expect(after.cookie).toBe('');
	await after.logIn();
	await expect(after.rest('GET', '/settings')).resolves.toEqual({ ok: true });
});
