import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV126 } from 'mcp-sdk-1.26/client/index.js';
import { StdioClientTransport as StdioV126 } from 'mcp-sdk-1.26/client/stdio.js';
import { StreamableHTTPClientTransport as HttpV126 } from 'mcp-sdk-1.26/client/streamableHttp.js';

/**
 * The MCP clients the server is tested with, as real clients speak:
 * - `modern`: the v2 SDK pinned to 2026-07-28;
 * - `auto`: the v2 SDK negotiating (as Claude Code does), which must find the modern era;
 * - `v2-legacy`: the v2 SDK in its default 2025 mode;
 * - `v1`: the last 1.x SDK (2025-11-25), as most 2025 clients (VS Code, Cursor) are built;
 * - `v1.26`: the SDK n8n 2.41's MCP Client node ships.
 */
export type ClientKind = 'modern' | 'auto' | 'v2-legacy' | 'v1' | 'v1.26';
export const CLIENT_KINDS: ClientKind[] = ['modern', 'auto', 'v2-legacy', 'v1', 'v1.26'];

export type Era = 'modern' | 'legacy';

/** The era each kind must end up speaking with this server. */
export const ERA_OF: Record<ClientKind, Era> = { modern: 'modern', auto: 'modern', 'v2-legacy': 'legacy', v1: 'legacy', 'v1.26': 'legacy' };

export interface CallOptions {
	signal?: AbortSignal;
	onprogress?: (progress: { progress: number; total?: number; message?: string }) => void;
	timeout?: number;
	resetTimeoutOnProgress?: boolean;
}

/** One client, whichever SDK: what the tests ask of it. */
export interface McpClient {
	readonly kind: ClientKind;
	/** The era it negotiated (asserted at connect to be ERA_OF[kind]). */
	readonly era: Era;
	/** How long connecting took, the probe or initialize included. */
	readonly connectMs: number;
	/** The session id a 2025 client was given at its initialize and sends with each request. */
	sessionId(): string | undefined;
	listTools(): Promise<{ tools: Tool[] }>;
	callTool(params: { name: string; arguments: Record<string, unknown> }, options?: CallOptions): Promise<CallToolResult>;
	close(): Promise<void>;
}

const INFO = { name: 'omni-video-mcp-test', version: '1.0.0' };

export interface StdioCommand {
	command: string;
	args: string[];
	env: Record<string, string>;
}

type V1Client = ClientV1 | ClientV126;

function v2Client(kind: 'modern' | 'auto' | 'v2-legacy'): Client {
	const mode = kind === 'modern' ? { pin: '2026-07-28' } : kind === 'auto' ? 'auto' : 'legacy';
	return new Client(INFO, { versionNegotiation: { mode } } as ConstructorParameters<typeof Client>[1]);
}

function fromV2(kind: ClientKind, client: Client, connectMs: number): McpClient {
	const era = client.getProtocolEra() as Era;
	if (era !== ERA_OF[kind]) throw new Error(`the ${kind} client negotiated the ${era} era, not ${ERA_OF[kind]}`);
	return {
		kind,
		era,
		connectMs,
		sessionId: () => (client.transport as { sessionId?: string } | undefined)?.sessionId,
		listTools: () => client.listTools() as Promise<{ tools: Tool[] }>,
		callTool: (params, options) => client.callTool(params, options) as Promise<CallToolResult>,
		close: () => client.close(),
	};
}

function fromV1(kind: ClientKind, client: V1Client, connectMs: number): McpClient {
	return {
		kind,
		era: 'legacy',
		connectMs,
		sessionId: () => (client.transport as { sessionId?: string } | undefined)?.sessionId,
		listTools: () => client.listTools() as Promise<{ tools: Tool[] }>,
		callTool: (params, options) => client.callTool(params, undefined, options) as Promise<CallToolResult>,
		close: () => client.close(),
	};
}

/** A client of that kind on a server it starts over stdio; the server's stderr goes to `onStderr`. */
export async function clientOverStdio(kind: ClientKind, server: StdioCommand, onStderr: (text: string) => void): Promise<McpClient> {
	const started = performance.now();
	const listen = (transport: { stderr: NodeJS.ReadableStream | null | { on: (event: 'data', listener: (chunk: Buffer) => void) => unknown } }) =>
		(transport.stderr as NodeJS.ReadableStream | null)?.on('data', (chunk: Buffer) => onStderr(chunk.toString('utf8')));
	if (kind === 'v1' || kind === 'v1.26') {
		const transport = kind === 'v1' ? new StdioV1({ ...server, stderr: 'pipe' }) : new StdioV126({ ...server, stderr: 'pipe' });
		listen(transport);
		const client = kind === 'v1' ? new ClientV1(INFO) : new ClientV126(INFO);
		await (client as ClientV1).connect(transport as StdioV1);
		return fromV1(kind, client, performance.now() - started);
	}
	const transport = new StdioClientTransport({ ...server, stderr: 'pipe' });
	listen(transport);
	const client = v2Client(kind);
	await client.connect(transport);
	return fromV2(kind, client, performance.now() - started);
}

/** A v2 client of that kind on a transport of the test's own (the SDK's in-memory pair, say). */
export async function clientOver(kind: 'modern' | 'auto' | 'v2-legacy', transport: Parameters<Client['connect']>[0]): Promise<McpClient> {
	const started = performance.now();
	const client = v2Client(kind);
	await client.connect(transport);
	return fromV2(kind, client, performance.now() - started);
}

/** A client of that kind over Streamable HTTP, with these headers on every request. */
export async function clientOverHttp(kind: ClientKind, url: string, headers: Record<string, string>): Promise<McpClient> {
	const started = performance.now();
	if (kind === 'v1' || kind === 'v1.26') {
		const transport = kind === 'v1' ? new HttpV1(new URL(url), { requestInit: { headers } }) : new HttpV126(new URL(url), { requestInit: { headers } });
		const client = kind === 'v1' ? new ClientV1(INFO) : new ClientV126(INFO);
		await (client as ClientV1).connect(transport as HttpV1);
		return fromV1(kind, client, performance.now() - started);
	}
	const client = v2Client(kind);
	await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
	return fromV2(kind, client, performance.now() - started);
}
