/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test tooling, never shipped */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { createNodeClient } from '../../node-host/runtime';

const KEY = 'omni_live_s3cr3t_KEY_1234567890';

/** A hostile service that echoes the Authorization header back in every way it can. */
function echoingServer(): Promise<{ url: string; close: () => Promise<void>; seenAuth: string[] }> {
	const seenAuth: string[] = [];
	const server = http.createServer((req, res) => {
		const auth = req.headers.authorization ?? '';
		seenAuth.push(`${req.method} ${req.url} ${auth}`);
		const status = req.url?.includes('job_401') ? 401 : req.url?.includes('job_500') ? 500 : 400;
		if (req.url?.includes('job_reset')) {
			req.socket.destroy();
			return;
		}
		res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req_${auth}` });
		res.end(JSON.stringify({ error: { code: 'unauthorized', message: `Key ${auth} is not valid`, requestId: auth } }));
	});
	return new Promise((resolve) =>
		server.listen(0, '127.0.0.1', () =>
			resolve({
				url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
				close: () => new Promise<void>((done) => server.close(() => done())),
				seenAuth,
			}),
		),
	);
}

function expectNoKey(value: unknown): void {
	const views = [String(value), inspect(value, { depth: 10, showHidden: true }), JSON.stringify(value)];
	for (const view of views) expect(view).not.toContain(KEY);
	expect(views.join('')).not.toContain('s3cr3t');
}

describe('the API key never appears in what core reports', () => {
	let server: Awaited<ReturnType<typeof echoingServer>>;
	beforeAll(async () => {
		server = await echoingServer();
	});
	afterAll(() => server.close());

	it.each(['job_401', 'job_500', 'job_400', 'job_reset'])('not in the error for %s', async (jobId) => {
		const client = createNodeClient({ baseUrl: server.url, apiKey: KEY, plan: 'premium' });
		const error = await client.getJob(jobId).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(Error);
		expectNoKey(error);
		expectNoKey((error as { toJSON?: () => unknown }).toJSON?.());
	});

	it('not in a failed create, whose message still names the idempotency key', async () => {
		const client = createNodeClient({ baseUrl: server.url, apiKey: KEY });
		const error = await client.generateVideo({ prompt: 'p' }, { idempotencyKey: 'idem_visible' }).catch((e: unknown) => e);
		expectNoKey(error);
	});

	it('not in a refused connection error', async () => {
		const client = createNodeClient({ baseUrl: 'http://127.0.0.1:9', apiKey: KEY });
		const error = await client.getJob('job_1').catch((e: unknown) => e);
		expect(error).toMatchObject({ kind: 'transport', failure: 'refused' });
		expectNoKey(error);
	});

	it('is sent to the API host as a bearer token, and only there', async () => {
		const client = createNodeClient({ baseUrl: server.url, apiKey: KEY });
		await client.getJob('job_400').catch(() => undefined);
		expect(server.seenAuth.some((line) => line.endsWith(`Bearer ${KEY}`))).toBe(true);
		await expect(client.runtime.transport.api({ method: 'GET', url: 'http://127.0.0.2:1/x' })).rejects.toThrow(/Refusing/);
	});
});
