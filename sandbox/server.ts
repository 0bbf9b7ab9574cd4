/* eslint-disable @n8n/community-nodes/no-restricted-imports -- dev tooling, never shipped in the n8n package */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Accounts } from './accounts';
import type { CallbackAttempt } from './callbacks';
import type { VirtualClock } from './clock';
import { resolveConfig, sandboxKeys, type SandboxConfig, type SandboxKeys } from './config';
import { errorReply, newId, send } from './httpUtil';
import type { Jobs } from './jobs';
import { handleAdminRequest } from './routes/admin';
import { handleApiRequest } from './routes/apiRequest';
import { handleFileRequest } from './routes/files';
import { serviceReading, type ServiceReading } from './service';
import { SandboxState, type JournalEntry } from './state';

export type { JournalEntry } from './state';

export interface Sandbox {
	url: string;
	config: SandboxConfig;
	/** The config's keys by role (a role the config has no key for throws when asked for). */
	keys: SandboxKeys;
	webhookSecret: string;
	/** The service profile answering (`default` or `spec`) and each switch as it stands. */
	service: ServiceReading;
	clock: VirtualClock;
	accounts: Accounts;
	jobs: Jobs;
	journal: JournalEntry[];
	callbackAttempts: CallbackAttempt[];
	/** Back to the state at start: no jobs, fresh balances, empty journal. */
	reset(): void;
	close(): Promise<void>;
}

export type SandboxOptions = Partial<SandboxConfig> & { configFile?: string };

/** The three families of routes, told apart by the path's first segment. */
async function handle(state: SandboxState, req: IncomingMessage, res: ServerResponse): Promise<void> {
	const requestId = newId('req');
	let url: URL;
	try {
		url = new URL(req.url ?? '/', state.baseUrl);
	} catch {
		return send(res, errorReply(400, 'invalid_request', 'The request target is not a valid path.'), requestId);
	}
	if (url.pathname.startsWith('/__sandbox/')) return handleAdminRequest(state, req, res, url, requestId);
	if (url.pathname.startsWith('/api/')) return handleApiRequest(state, req, res, url, requestId);
	return handleFileRequest(state, req, res, url, requestId);
}

/** Starts the sandbox on 127.0.0.1 (port 0 picks a free port) and resolves once it listens. */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
	const config = resolveConfig(options);
	const state = new SandboxState(config);
	const sockets = new Set<Socket>();
	const server = http.createServer((req, res) => {
		handle(state, req, res).catch((error: unknown) => {
			if (!res.headersSent) send(res, errorReply(500, 'internal', `Sandbox error: ${(error as Error).message}`), newId('req'));
			else res.destroy();
		});
	});
	server.on('connection', (socket) => {
		sockets.add(socket);
		socket.on('close', () => sockets.delete(socket));
	});
	await new Promise<void>((resolve, reject) => {
		server.once('error', reject);
		server.listen(config.port, config.host, () => resolve());
	});
	const address = server.address() as AddressInfo;
	state.baseUrl = `http://${config.host}:${address.port}`;

	return {
		url: state.baseUrl,
		config,
		keys: sandboxKeys(config),
		webhookSecret: config.webhookSecret,
		service: serviceReading(config),
		clock: state.clock,
		accounts: state.accounts,
		jobs: state.jobs,
		journal: state.journal,
		callbackAttempts: state.callbacks.attempts,
		reset: () => state.reset(),
		async close() {
			state.close();
			for (const socket of sockets) socket.destroy();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
}
