/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-restricted-globals -- the Activepieces piece: n8n's rules for community nodes do not apply to it */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ResumePayload } from '@activepieces/shared';

/**
 * The resume endpoint of an Activepieces server (`/api/v1/flow-runs/<run>/waitpoints/<id>`), on
 * loopback: records each POST as the server hands it to the engine as `resumePayload`.
 */
export async function startResumeServer(): Promise<{
	origin: string;
	received: Array<{ path: string; payload: ResumePayload }>;
	waitFor: (path: string, timeoutMs?: number) => Promise<ResumePayload>;
	close: () => Promise<void>;
}> {
	const received: Array<{ path: string; payload: ResumePayload }> = [];
	const server = http.createServer((req, res) => {
		let rawBody = '';
		req.on('data', (chunk: Buffer) => (rawBody += chunk.toString('utf8')));
		req.on('end', () => {
			const url = new URL(req.url ?? '/', 'http://127.0.0.1');
			const headers: Record<string, string> = {};
			for (const [name, value] of Object.entries(req.headers)) headers[name] = String(value);
			let body: unknown = rawBody;
			try {
				body = JSON.parse(rawBody);
			} catch {
				// Kept as text, as the server does for a body that is not JSON.
			}
			received.push({ path: url.pathname, payload: { body, rawBody, headers, queryParams: Object.fromEntries(url.searchParams) } });
			res.writeHead(200, { 'Content-Type': 'application/json' });
			res.end('{}');
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
	const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	return {
		origin,
		received,
		waitFor: async (path, timeoutMs = 15_000) => {
			const deadline = Date.now() + timeoutMs;
			for (;;) {
				const found = received.find((r) => r.path === path);
				if (found) return found.payload;
				if (Date.now() > deadline) throw new Error(`no request to ${path} within ${timeoutMs} ms`);
				await new Promise((resolve) => setTimeout(resolve, 20));
			}
		},
		close: () =>
			new Promise<void>((resolve) => {
				server.closeAllConnections();
				server.close(() => resolve());
			}),
	};
}
