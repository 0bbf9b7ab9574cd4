/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-hardcoded-secrets -- end-to-end tooling, never shipped */
/**
 * One real n8n server from the cache, on loopback, with its own user folder: the package installed
 * as n8n's community-package installer installs it (an npm pack tarball in `<user folder>/.n8n/nodes`),
 * an owner account, an API key, and helpers for its REST and public APIs and its CLI.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { n8nBinary, n8nNode, n8nPath, webhookUrlEnv } from './cache';
import { freePort, run, startService, stopService, waitUntil, type Service } from './processes';

export const OWNER = { email: 'owner@example.com', password: 'Omni-Video-e2e-1', firstName: 'Omni', lastName: 'Video' };
export const PACKAGE_NAME = 'n8n-nodes-omni-video';

export interface N8nProcessOptions {
	version: string;
	/** The user folder (n8n keeps `.n8n/` in it). */
	userFolder: string;
	/** Extra environment, e.g. queue mode's database and Redis settings. */
	env?: Record<string, string>;
	log: (line: string) => void;
}

/** The environment every n8n process of one instance shares. */
export function baseEnv(version: string, userFolder: string, port: number, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
	return {
		// The Node this version runs on comes first: n8n's task runners start with `node` from PATH.
		PATH: n8nPath(version),
		HOME: process.env.HOME,
		N8N_USER_FOLDER: userFolder,
		N8N_HOST: '127.0.0.1',
		N8N_LISTEN_ADDRESS: '127.0.0.1',
		N8N_PORT: String(port),
		N8N_PROTOCOL: 'http',
		...webhookUrlEnv(version, `http://127.0.0.1:${port}/`),
		N8N_EDITOR_BASE_URL: `http://127.0.0.1:${port}/`,
		N8N_ENCRYPTION_KEY: 'omni-video-e2e-encryption-key',
		N8N_SECURE_COOKIE: 'false',
		N8N_DIAGNOSTICS_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
		N8N_TEMPLATES_ENABLED: 'false',
		N8N_PERSONALIZATION_ENABLED: 'false',
		N8N_HIRING_BANNER_ENABLED: 'false',
		N8N_COMMUNITY_PACKAGES_ENABLED: 'true',
		N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
		N8N_RUNNERS_ENABLED: 'true',
		N8N_BLOCK_ENV_ACCESS_IN_NODE: 'false',
		N8N_PUBLIC_API_SWAGGERUI_DISABLED: 'true',
		EXECUTIONS_DATA_SAVE_ON_SUCCESS: 'all',
		EXECUTIONS_DATA_SAVE_ON_ERROR: 'all',
		N8N_DEFAULT_BINARY_DATA_MODE: 'filesystem',
		DB_SQLITE_POOL_SIZE: '2',
		NODE_ENV: 'production',
		...extra,
	};
}

/**
 * Installs the packed package the way n8n's community-package installer does (`downloadPackage`
 * in its CommunityPackagesService): the tarball unpacked into `<nodes>/node_modules/<name>`, its
 * dev, peer and optional dependencies dropped from its package.json (so that `n8n-workflow` comes
 * from n8n itself), `npm install` with n8n's flags inside it, and the dependency recorded in
 * `<nodes>/package.json`.
 */
export async function installPackage(userFolder: string, tarball: string, log: (line: string) => void): Promise<void> {
	const nodesDir = join(userFolder, '.n8n', 'nodes');
	const packageDir = join(nodesDir, 'node_modules', PACKAGE_NAME);
	await rm(packageDir, { recursive: true, force: true });
	await mkdir(packageDir, { recursive: true });
	await run('tar', ['-xzf', tarball, '-C', packageDir, '--strip-components=1'], { quiet: true });
	const manifestPath = join(packageDir, 'package.json');
	const { devDependencies, peerDependencies, optionalDependencies, ...manifest } = JSON.parse(await readFile(manifestPath, 'utf8')) as Record<string, unknown>;
	void [devDependencies, peerDependencies, optionalDependencies];
	await writeFile(manifestPath, JSON.stringify(manifest, null, 2));
	await run('npm', ['install', '--audit=false', '--fund=false', '--bin-links=false', '--install-strategy=shallow', '--ignore-scripts=true', '--package-lock=false'], {
		cwd: packageDir,
		label: `npm install in ${packageDir}`,
		log,
		quiet: true,
	});
	const nodesManifest = join(nodesDir, 'package.json');
	const nodes: { dependencies?: Record<string, string> } = existsSync(nodesManifest) ? JSON.parse(await readFile(nodesManifest, 'utf8')) : { name: 'installed-nodes', private: true };
	nodes.dependencies = { ...nodes.dependencies, [PACKAGE_NAME]: String(manifest.version) };
	await writeFile(nodesManifest, JSON.stringify(nodes, null, 2));
}

/** A started n8n server: its URL, and a logged-in REST session plus a public-API key. */
export class N8nServer {
	readonly services: Service[] = [];
	cookie = '';
	apiKey = '';
	private readonly browserId = randomUUID();

	constructor(
		readonly version: string,
		readonly url: string,
		readonly userFolder: string,
		readonly env: NodeJS.ProcessEnv,
	) {}

	get major(): number {
		return Number(this.version.split('.')[0]);
	}

	/** Starts `n8n <command>` (start, worker, webhook) with this instance's environment. */
	spawn(name: string, args: string[], extraEnv: Record<string, string> = {}): Service {
		const service = startService(name, n8nNode(this.version), [n8nBinary(this.version), ...args], {
			env: { ...this.env, ...extraEnv },
			cwd: this.userFolder,
			logFile: join(this.userFolder, `${name}.log`),
		});
		this.services.push(service);
		return service;
	}

	/** Runs one n8n CLI command against this instance's database to its end; returns its output. */
	async cli(args: string[]): Promise<string> {
		// A CLI command starts its own task broker: it must not take the server's port.
		const env = { ...this.env, N8N_RUNNERS_BROKER_PORT: String(await freePort()) };
		return run(n8nNode(this.version), [n8nBinary(this.version), ...args], { env, cwd: this.userFolder, label: `n8n ${args[0]}`, quiet: true });
	}

	async stop(): Promise<void> {
		// Workers and webhook processors first, main last: it owns the schedule of waiting executions.
		for (const service of [...this.services].reverse()) await stopService(service);
	}

	/**
	 * A single-process server stopped and started again on the same port, user folder and database,
	 * as a deploy or a crash does: whatever a process keeps only in memory is gone. `name` names the
	 * new process's log. The owner's session and API key live in the database and stay valid.
	 */
	async restart(name: string): Promise<void> {
		await this.stop();
		this.services.length = 0;
		await this.waitReady(this.spawn(name, ['start']));
	}

	/** Waits for /healthz and then for the REST API, which comes up after the nodes are loaded. */
	async waitReady(service: Service, timeoutMs = 180_000): Promise<void> {
		await waitUntil(
			`n8n ${this.version} at ${this.url}`,
			async () => {
				if (service.child.exitCode !== null) throw new Error(`n8n exited:\n${service.tail()}`);
				const response = await fetch(`${this.url}/rest/settings`);
				if (!response.ok) return false;
				// Only n8n's own answer counts (another server on a reused port answered once).
				try {
					return typeof ((await response.json()) as { data?: unknown }).data === 'object';
				} catch {
					return false;
				}
			},
			timeoutMs,
			500,
		).catch((error: unknown) => {
			if (service.child.exitCode !== null) throw new Error(`n8n ${this.version} exited (${String(service.child.exitCode)}):\n${service.tail()}`);
			throw error;
		});
	}

	/** A call to n8n's internal REST API (the editor's), as the owner. */
	async rest<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
		const response = await fetch(`${this.url}/rest${path}`, {
			method,
			headers: { 'content-type': 'application/json', 'browser-id': this.browserId, cookie: this.cookie },
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const setCookie = response.headers.get('set-cookie');
		// n8n binds a session to the browser id that logged in: another client's cookie comes back emptied, and logIn() starts a session of its own.
		const auth = setCookie ? /n8n-auth=([^;]*)/.exec(setCookie) : null;
		if (auth) this.cookie = auth[1] ? `n8n-auth=${auth[1]}` : '';
		const text = await response.text();
		if (!response.ok) throw new Error(`${method} /rest${path}: ${response.status} ${text.slice(0, 500)}`);
		const parsed = text ? (JSON.parse(text) as { data?: T }) : {};
		return (parsed.data ?? parsed) as T;
	}

	/** A call to n8n's public API with the API key. */
	async api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
		const response = await fetch(`${this.url}/api/v1${path}`, {
			method,
			headers: { 'content-type': 'application/json', 'x-n8n-api-key': this.apiKey },
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const text = await response.text();
		if (!response.ok) throw new Error(`${method} /api/v1${path}: ${response.status} ${text.slice(0, 500)}`);
		return (text ? JSON.parse(text) : {}) as T;
	}

	/** Logs the owner in: a session for the REST calls the editor makes. */
	async logIn(): Promise<void> {
		await this.rest('POST', '/login', { email: OWNER.email, emailOrLdapLoginId: OWNER.email, password: OWNER.password });
	}

	/** Creates the owner account (or logs in when it exists) and an API key for the public API. */
	async setUpOwner(): Promise<void> {
		const settings = await this.rest<{ userManagement?: { showSetupOnFirstLoad?: boolean } }>('GET', '/settings');
		if (settings.userManagement?.showSetupOnFirstLoad !== false) {
			await this.rest('POST', '/owner/setup', OWNER);
		}
		await this.logIn();
		const scopes = await this.rest<string[]>('GET', '/api-keys/scopes').catch(() => undefined);
		const created = await this.rest<{ rawApiKey?: string; apiKey?: string }>('POST', '/api-keys', {
			label: `e2e ${Date.now()}`,
			expiresAt: null,
			...(scopes ? { scopes } : {}),
		});
		this.apiKey = created.rawApiKey ?? created.apiKey ?? '';
		if (!this.apiKey) throw new Error('n8n returned no API key');
	}

	/** A credential of type omniVideoApi, created through the public API; returns its id. */
	async createCredential(name: string, data: Record<string, unknown>): Promise<string> {
		const created = await this.api<{ id: string }>('POST', '/credentials', { name, type: 'omniVideoApi', data });
		return created.id;
	}

	/** A workflow created through the public API (it accepts only these fields); returns its id. */
	async createWorkflow(workflow: { name: string; nodes: unknown[]; connections: unknown; settings?: unknown }): Promise<string> {
		const created = await this.api<{ id: string }>('POST', '/workflows', {
			name: workflow.name,
			nodes: workflow.nodes,
			connections: workflow.connections,
			settings: workflow.settings ?? { executionOrder: 'v1' },
		});
		return created.id;
	}

	/** A stored workflow, as the public API gives it. */
	async workflow(workflowId: string): Promise<StoredWorkflow> {
		return this.api<StoredWorkflow>('GET', `/workflows/${workflowId}`);
	}

	/** Saves a changed workflow (its nodes keep their ids, as the editor keeps them). */
	async updateWorkflow(workflowId: string, workflow: StoredWorkflow): Promise<void> {
		const { name, nodes, connections, settings } = workflow;
		await this.api('PUT', `/workflows/${workflowId}`, { name, nodes, connections, settings: settings ?? { executionOrder: 'v1' } });
	}

	/**
	 * The executions list's Retry: `loadWorkflow` false retries with the failed execution's own
	 * workflow, true with the currently saved one. n8n answers when the retry has finished.
	 */
	async retry(executionId: string, loadWorkflow: boolean): Promise<{ id: string; status: string }> {
		return this.rest<{ id: string; status: string }>('POST', `/executions/${executionId}/retry`, { loadWorkflow });
	}

	async activate(workflowId: string): Promise<void> {
		await this.api('POST', `/workflows/${workflowId}/activate`);
	}

	async deactivate(workflowId: string): Promise<void> {
		await this.api('POST', `/workflows/${workflowId}/deactivate`);
	}

	/** The executions of a workflow, newest first, with their data. */
	async executions(workflowId: string): Promise<Execution[]> {
		const page = await this.api<{ data: Execution[] }>('GET', `/executions?workflowId=${workflowId}&includeData=true&limit=250`);
		return page.data;
	}

	async execution(id: string): Promise<Execution> {
		return this.api<Execution>('GET', `/executions/${id}?includeData=true`);
	}

	/** The bytes of a binary item from an execution (filesystem or database binary mode). */
	async binary(binary: { id?: string; data?: string; mimeType?: string; fileName?: string }): Promise<Buffer> {
		if (!binary.id) return Buffer.from(binary.data ?? '', 'base64');
		const query = new URLSearchParams({ id: binary.id, action: 'download', mimeType: binary.mimeType ?? '', fileName: binary.fileName ?? '' });
		const response = await fetch(`${this.url}/rest/binary-data?${query.toString()}`, { headers: { cookie: this.cookie, 'browser-id': this.browserId } });
		if (!response.ok) throw new Error(`binary ${binary.id}: ${response.status}`);
		return Buffer.from(await response.arrayBuffer());
	}
}

export interface StoredWorkflow {
	name: string;
	nodes: Array<{ id: string; name: string; type: string; parameters: Record<string, unknown> }>;
	connections: unknown;
	settings?: unknown;
}

export interface Execution {
	id: string;
	finished: boolean;
	mode: string;
	status: string;
	startedAt: string;
	stoppedAt: string | null;
	waitTill?: string | null;
	workflowId: string;
	data?: {
		resultData: {
			runData: Record<string, Array<{ data?: { main: Array<Array<{ json: Record<string, unknown>; binary?: Record<string, { id?: string; data?: string; mimeType?: string; fileName?: string; fileSize?: string }> }> | null> }; error?: { message: string; description?: string } }>>;
			error?: { message: string; description?: string };
			lastNodeExecuted?: string;
		};
	};
}

/** Starts a single-process n8n with the package installed; owner and API key set up. */
export async function startN8n(
	options: N8nProcessOptions & { tarball: string; port?: number; beforeStart?: (server: N8nServer) => Promise<void> },
): Promise<N8nServer> {
	const port = options.port ?? (await freePort());
	const brokerPort = await freePort();
	await rm(options.userFolder, { recursive: true, force: true });
	await mkdir(options.userFolder, { recursive: true });
	await installPackage(options.userFolder, options.tarball, options.log);
	const env = baseEnv(options.version, options.userFolder, port, { N8N_RUNNERS_BROKER_PORT: String(brokerPort), ...options.env });
	const server = new N8nServer(options.version, `http://127.0.0.1:${port}`, options.userFolder, env);
	await options.beforeStart?.(server);
	const started = Date.now();
	const main = server.spawn('main', ['start']);
	await server.waitReady(main);
	options.log(`n8n ${options.version}: up at ${server.url} in ${Math.round((Date.now() - started) / 1000)} s`);
	await server.setUpOwner();
	return server;
}
