/* eslint-disable @n8n/community-nodes/no-restricted-imports -- a test, never shipped */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startSandbox, type Sandbox } from '../../sandbox';
import { authFor, runWithCallbackUrl } from '../support/zapier/harness';

/** node:http as this file found it, before any Zapier step ran. */
const request = http.request;
let sandbox: Sandbox;

beforeAll(async () => {
	sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => {
	await sandbox.close();
});

it("a Zapier step patches node:http's request for Zapier's logs, while it runs", async () => {
	// Through Zapier's handler as a Zap runs it (createAppTester's runs skip the patch).
	await runWithCallbackUrl('authentication.test', { authData: authFor(sandbox.url, sandbox.keys.pro, { plan: 'pro' }) }, 'http://127.0.0.1:9/callback');
	expect(http.request).not.toBe(request);
});

it('the next test finds node:http as it was: a request given a URL, options and a callback is answered', async () => {
	expect(http.request).toBe(request);
	const server = http.createServer((_req, res) => res.end('ok'));
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	try {
		const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
		const body = await new Promise<string>((resolve, reject) => {
			const sent = http.request(url, { method: 'GET', agent: false }, (answer) => {
				let text = '';
				answer.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
				answer.on('end', () => resolve(text));
			});
			sent.on('error', reject);
			sent.end();
		});
		expect(body).toBe('ok');
	} finally {
		await new Promise<void>((resolve) => server.close(() => resolve()));
	}
});
