import type { Sandbox } from '../../sandbox';
import { CLIENT_KINDS, ERA_OF } from './support/clients';
import { basicsHold, cancelStops } from './support/eraChecks';
import { httpServer, overHttp, overStdio, sandboxFor, serverEnv, type Connected, type HttpServer } from './support/mcpHarness';

jest.setTimeout(120_000);

/**
 * Every client kind a user meets, on the era it speaks (ERA_OF: 2026-07-28 for the v2 SDK pinned
 * or negotiating, 2025 for the v2 SDK's default mode, the last 1.x and the 1.26 n8n 2.41 ships),
 * over stdio and over Streamable HTTP in one process: the basics, and a cancellation that stops
 * the call on the server. Three replicas behind a proxy: team.test.ts.
 */
describe.each(['stdio', 'http'] as const)('every client kind over %s, one process', (transport) => {
	let sandbox: Sandbox;
	let server: HttpServer | undefined;
	const outputs: string[] = [];
	const connectMs: string[] = [];
	const stoppedMs: string[] = [];

	beforeAll(async () => {
		sandbox = await sandboxFor('default');
		if (transport === 'http') {
			const { OMNI_VIDEO_API_KEY: _key, ...env } = serverEnv(sandbox);
			server = await httpServer(env);
		}
	});
	afterAll(async () => {
		await server?.stop();
		await sandbox?.close();
		process.stderr.write(`connect over ${transport}, one process: ${connectMs.join(', ')}\n`);
		process.stderr.write(`a cancelled call stopped over ${transport}, one process: ${stoppedMs.join(', ')} after the cancel\n`);
	});

	it.each(CLIENT_KINDS)('the %s client', async (kind) => {
		const connected: Connected = server ? await overHttp(server.url, sandbox.keys.pro, kind) : await overStdio(serverEnv(sandbox), [], kind);
		try {
			expect(connected.client.era).toBe(ERA_OF[kind]);
			connectMs.push(`${kind} ${Math.round(connected.client.connectMs)} ms`);
			outputs.push(...(await basicsHold(connected.client, sandbox, `A ${kind} kite over ${transport}`)));
			stoppedMs.push(`${kind} ${await cancelStops(connected.client, `A ${kind} lighthouse over ${transport}`, () => (server ? server.log() : connected.log()))} ms`);
		} finally {
			await connected.close();
		}
	});

	it('never shows the key', () => {
		expect(outputs.length).toBeGreaterThan(10);
		expect(outputs.join('\n') + (server?.log() ?? '')).not.toContain(sandbox.keys.pro);
	});
});

describe('2025 versions over HTTP', () => {
	let sandbox: Sandbox;
	let server: HttpServer;
	beforeAll(async () => {
		sandbox = await sandboxFor('default');
		const { OMNI_VIDEO_API_KEY: _key, ...env } = serverEnv(sandbox);
		server = await httpServer(env);
	});
	afterAll(async () => {
		await server?.stop();
		await sandbox?.close();
	});

	it.each(['2025-11-25', '2025-06-18', '2025-03-26'])('an initialize of %s is answered in it, with a session id every replica takes', async (protocolVersion) => {
		const answer = await fetch(server.url, {
			method: 'POST',
			headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${sandbox.keys.pro}` },
			body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
		});
		expect(answer.status).toBe(200);
		expect(answer.headers.get('mcp-session-id')).toMatch(/^[0-9a-f-]{36}$/);
		expect(await answer.text()).toContain(`"protocolVersion":"${protocolVersion}"`);
	});
});
