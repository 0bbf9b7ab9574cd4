/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test tooling, never shipped */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { createNodeClient, systemClock } from '../../node-host/runtime';
import { createAxiosTransport } from '../../node-host/axiosTransport';
import { createOmniVideoClient } from '../../core/client';
import { PLANS } from '../../core/types';

const KEY = 'omni_dummy_s3cr3t_1234567890';

/** A hostile service that echoes the Authorization header back in every way it can. */
function echoingServer(): Promise<{ url: string; close: () => Promise<void>; seenAuth: string[] }> {
	const seenAuth: string[] = [];
	const server = http.createServer((req, res) => {
		let body = '';
		req.on('data', (chunk: Buffer) => (body += chunk.toString()));
		req.on('end', () => {
			const auth = req.headers.authorization ?? '';
			seenAuth.push(`${req.method} ${req.url} ${auth}`);
			const marker = `${req.url} ${body}`;
			if (marker.includes('job_reset')) {
				req.socket.destroy();
				return;
			}
			const status = marker.includes('job_401') ? 401 : marker.includes('job_500') ? 500 : 400;
			res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req_${auth}` });
			res.end(
				JSON.stringify({ error: { code: 'unauthorized', message: `Key ${auth} is not valid`, requestId: auth } }),
			);
		});
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

	// Lookups that the client would retry (5xx, resets) are covered through creates, which are
	// never retried, so that the test does not sit through real backoff.
	it.each(['job_401', 'job_400'])('not in the error for a lookup of %s', async (jobId) => {
		const client = createNodeClient({ baseUrl: server.url, apiKey: KEY, plan: 'premium' });
		const error = await client.getJob(jobId).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(Error);
		expectNoKey(error);
		expectNoKey((error as { toJSON?: () => unknown }).toJSON?.());
	});

	it.each(['job_500', 'job_reset', 'job_400'])(
		'not in a failed create (%s), whose message still names the idempotency key',
		async (marker) => {
			const client = createNodeClient({ baseUrl: server.url, apiKey: KEY });
			const error = await client
				.generateVideo({ prompt: marker }, { idempotencyKey: 'idem_visible' })
				.catch((e: unknown) => e);
			expect(error).toBeInstanceOf(Error);
			expectNoKey(error);
			if (marker !== 'job_400') expect((error as Error).message).toContain('idem_visible');
		},
	);

	it('not in a refused connection error', async () => {
		// Real transport, no real backoff: the retries of a refused connection are not the point here.
		const client = createOmniVideoClient({
			baseUrl: 'http://127.0.0.1:9',
			transport: createAxiosTransport({ apiKey: KEY }),
			clock: systemClock,
			sleep: () => Promise.resolve(),
			random: Math.random,
			limits: PLANS.premium,
			limiterKey: 'secrecy-refused',
			redact: [KEY],
		});
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
