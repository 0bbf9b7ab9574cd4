/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-restricted-globals -- test tooling, never shipped */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedCallback {
	headers: Record<string, string>;
	body: string;
	at: number;
}

/**
 * A callback endpoint on 127.0.0.1 for tests: records each delivery and answers with the next
 * status of `statuses` (the last one repeats).
 */
export async function startReceiver(statuses: number[] = [200]): Promise<{
	url: string;
	received: ReceivedCallback[];
	waitFor: (count: number, timeoutMs?: number) => Promise<ReceivedCallback[]>;
	close: () => Promise<void>;
}> {
	const received: ReceivedCallback[] = [];
	const server = http.createServer((req, res) => {
		let body = '';
		req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
		req.on('end', () => {
			const headers: Record<string, string> = {};
			for (const [name, value] of Object.entries(req.headers)) headers[name] = String(value);
			received.push({ headers, body, at: Date.now() });
			const status = statuses[Math.min(received.length - 1, statuses.length - 1)];
			res.writeHead(status, { 'Content-Type': 'text/plain' });
			res.end('ok');
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
	const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/omni-callback`;
	return {
		url,
		received,
		waitFor: async (count, timeoutMs = 10_000) => {
			const deadline = Date.now() + timeoutMs;
			while (received.length < count) {
				if (Date.now() > deadline) throw new Error(`expected ${count} callbacks, got ${received.length}`);
				await new Promise((resolve) => setTimeout(resolve, 20));
			}
			return received;
		},
		close: () =>
			new Promise<void>((resolve) => {
				server.closeAllConnections();
				server.close(() => resolve());
			}),
	};
}

/** Polls until `check` returns a value, for state that changes on the sandbox's clock. */
export async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, timeoutMs = 10_000): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await check();
		if (value !== undefined) return value;
		if (Date.now() > deadline) throw new Error('condition not reached in time');
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
}
