/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test tooling, never shipped */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * How strictly a test reads the service: `default`, the sandbox as docs/api.md decides it (it
 * replays a create sent again with the same Idempotency-Key); `keysIgnored`, the spec's strictest
 * reading of that point (the spec never names the header: every create is answered anew). Until
 * the sandbox's own service profiles land, `keysIgnored` puts a proxy before the sandbox that
 * drops the header, so the sandbox never sees a key: exactly a service that ignores it.
 */
export type ServiceReading = 'default' | 'keysIgnored';

/**
 * The reading a test run takes: OMNI_TEST_SERVICE_READING=keysIgnored, or the sandbox's strict
 * profile (OMNI_SANDBOX_SERVICE=spec), whose keys are ignored too.
 */
export function readingOfThisRun(): ServiceReading {
	if (process.env.OMNI_TEST_SERVICE_READING === 'keysIgnored' || process.env.OMNI_SANDBOX_SERVICE === 'spec') return 'keysIgnored';
	return 'default';
}

export interface ServiceFront {
	url: string;
	close(): Promise<void>;
}

/** The base URL clients use for `reading` of the sandbox at `sandboxUrl`. */
export async function serviceFront(
	sandboxUrl: string,
	reading: ServiceReading,
): Promise<ServiceFront> {
	if (reading === 'default') return { url: sandboxUrl, close: async () => {} };
	const target = new URL(sandboxUrl);
	const server = http.createServer((req, res) => {
		const headers = { ...req.headers };
		delete headers['idempotency-key'];
		delete headers.host;
		const upstream = http.request(
			{ host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
			(answer) => {
				res.writeHead(answer.statusCode ?? 502, answer.headers);
				answer.pipe(res);
			},
		);
		upstream.on('error', () => res.destroy());
		req.on('aborted', () => upstream.destroy());
		req.pipe(upstream);
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}`,
		close: () =>
			new Promise<void>((resolve) => {
				server.closeAllConnections();
				server.close(() => resolve());
			}),
	};
}
