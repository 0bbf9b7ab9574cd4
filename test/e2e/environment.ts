/* eslint-disable no-console, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/require-node-api-error, @n8n/community-nodes/no-hardcoded-secrets -- end-to-end tooling, never shipped */
/** The sandbox, a loopback file server and one n8n with the package, credentials and examples. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../sandbox';
import { PLANS } from '../../core/types';
import { cacheDir, ensureN8n } from './cache';
import type { Context } from './context';
import { importCredentialsAndExamples, EXAMPLE_CREDENTIAL, EXAMPLE_TRIGGER_WEBHOOK, REPO, type ExampleWorkflow } from './instance';
import { startN8n, type N8nServer } from './n8nServer';
import { run } from './processes';

/** The sandbox's usual speed: virtual time runs this much faster, renders of 30–90 s take 3–9 s. */
export const DEFAULT_SPEED = 10;

/**
 * The sandbox's speed in the one-process scenarios (and queue mode's main sandbox): DEFAULT_SPEED
 * unless `E2E_SPEED` (or `--speed=N`) sets another, by hand. 1 is real speed, what users run: at
 * 10× n8n's own steps are not sped up, so a callback refused while a step runs (409) and the
 * service's retry 5 s later (0.5 s at 10×) weigh ten times what they do for a user. The figures
 * docs/benchmarks.md gives as today's come from real-speed runs; the 10× ones are its stress runs.
 */
export const SPEED = speedOption() ?? DEFAULT_SPEED;

function speedOption(): number | undefined {
	const arg = process.argv.find((value) => value.startsWith('--speed='));
	const value = arg ? arg.slice('--speed='.length) : process.env.E2E_SPEED;
	if (value === undefined || value === '') return undefined;
	const speed = Number(value);
	if (!(speed > 0)) throw new Error(`E2E_SPEED must be a number above 0, not "${value}"`);
	return speed;
}

/**
 * A check's patience, written for DEFAULT_SPEED, at the speed the run uses: waits that cover
 * renders grow as the sandbox slows (never shrink below what they were written as).
 */
export function patienceMs(msAtDefaultSpeed: number): number {
	return msAtDefaultSpeed * Math.max(1, DEFAULT_SPEED / SPEED);
}
/** A PNG signature and header chunk start: what the node and the sandbox check an image by. */
export const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 73, 72, 68, 82]);

const log = (line: string) => console.log(`  ${line}`);

/** Builds the package and packs it as it would be published; returns the tarball's path. */
export async function packPackage(): Promise<string> {
	const dir = join(cacheDir(), 'pack');
	await mkdir(dir, { recursive: true });
	await run('npm', ['run', 'build'], { cwd: REPO, label: 'npm run build', quiet: true });
	const output = await run('npm', ['pack', '--json', '--ignore-scripts', `--pack-destination=${dir}`], { cwd: REPO, label: 'npm pack', quiet: true });
	const [{ filename }] = JSON.parse(output.slice(output.indexOf('['))) as Array<{ filename: string }>;
	log(`packed ${filename}`);
	return join(dir, filename);
}

/** Serves the PNG on loopback, for workflows that download an image first. */
async function fileServer(): Promise<{ url: string; close: () => Promise<void> }> {
	const server = http.createServer((_req, res) => {
		res.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG.length });
		res.end(PNG);
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/frame.png`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

export interface Environment {
	context: Context;
	examples: ExampleWorkflow[];
	sandbox: Sandbox;
	n8n: N8nServer;
	stop(): Promise<void>;
}

/** The credentials every instance gets (ids fixed, so that workflows can name them). */
export function credentialsFor(sandbox: Sandbox) {
	const scaled = { plan: 'custom', requestsPerMinute: PLANS.pro.requestsPerMinute * SPEED, requestsPerHour: PLANS.pro.requestsPerHour * SPEED, concurrentJobs: PLANS.pro.concurrentJobs };
	const base = { apiKey: sandbox.keys.pro, baseUrl: sandbox.url };
	return [
		{ ...EXAMPLE_CREDENTIAL, data: { ...base, plan: 'pro', webhookSecret: sandbox.webhookSecret } },
		{ id: 'omniVideoSigned1', name: 'Omni Video (signed)', data: { ...base, ...scaled, webhookSecret: sandbox.webhookSecret } },
		{ id: 'omniVideoLookup1', name: 'Omni Video (lookup)', data: { ...base, ...scaled } },
		{ id: 'omniVideoProReal', name: 'Omni Video (Pro)', data: { ...base, plan: 'pro' } },
		{ id: 'omniVideoRevoked', name: 'Omni Video (revoked)', data: { ...base, apiKey: sandbox.keys.revoked, plan: 'pro' } },
	];
}

/**
 * Starts the sandbox and n8n `version` (installed into the cache when missing) with the package,
 * the credentials and the examples; `n8nEnv` adds settings (queue mode's).
 */
export async function startEnvironment(options: {
	version: string;
	tarball: string;
	userFolder: string;
	n8nEnv?: Record<string, string>;
	sandboxSpeed?: number;
	sandboxPort?: number;
	n8nPort?: number;
	/** Only the examples' credential (what `npm start` gives a newcomer), or every test credential. */
	onlyExampleCredential?: boolean;
	/** More of the sandbox's settings (the soak's: its clock for clients, drawn faults). */
	sandboxOptions?: SandboxOptions;
}): Promise<Environment> {
	await ensureN8n(options.version, log);
	const sandbox = await startSandbox({ port: options.sandboxPort ?? 0, speed: options.sandboxSpeed ?? SPEED, insecureCallbacks: true, ...options.sandboxOptions });
	const files = await fileServer();
	const directKey = 'omni_test_e2e_direct';
	await fetch(`${sandbox.url}/__sandbox/keys`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key: directKey, account: 'acct_pro', label: 'e2e-direct' }) });
	let examples: ExampleWorkflow[] = [];
	let n8n: N8nServer | undefined;
	const stop = async () => {
		await n8n?.stop();
		await files.close();
		await sandbox.close();
	};
	try {
		n8n = await startN8n({
			version: options.version,
			userFolder: options.userFolder,
			tarball: options.tarball,
			env: options.n8nEnv,
			port: options.n8nPort,
			log,
			beforeStart: async (server) => {
				const credentials = credentialsFor(sandbox).filter((entry) => !options.onlyExampleCredential || entry.id === EXAMPLE_CREDENTIAL.id);
				examples = await importCredentialsAndExamples(server, credentials, (parameters) => rewriteExample(parameters, files.url, server.url));
				log(`imported ${examples.length} example workflows and the credentials through n8n's CLI`);
			},
		});
	} catch (error) {
		await stop();
		throw error;
	}
	const credential = (id: string) => {
		const found = credentialsFor(sandbox).find((entry) => entry.id === id)!;
		return { id: found.id, name: found.name };
	};
	const context: Context = {
		version: options.version,
		n8n,
		webhookUrl: n8n.url,
		sandbox,
		directKey,
		speed: options.sandboxSpeed ?? SPEED,
		credentials: { signed: credential('omniVideoSigned1'), lookup: credential('omniVideoLookup1'), pro: credential('omniVideoProReal'), revoked: credential('omniVideoRevoked') },
		pngUrl: files.url,
		png: PNG,
		examples,
	};
	return { context, examples, sandbox, n8n, stop };
}

/** The examples as a user adapts them: the image from a reachable URL, the callback to this n8n's trigger. */
function rewriteExample(parameters: Record<string, unknown>, pngUrl: string, n8nUrl: string): Record<string, unknown> {
	const text = JSON.stringify(parameters)
		.replace(/https:\/\/upload\.wikimedia\.org\/[^"]+/g, pngUrl)
		.replace(/https:\/\/YOUR-N8N-HOST\/webhook\//g, `${n8nUrl}/webhook/`);
	return JSON.parse(text) as Record<string, unknown>;
}

export { EXAMPLE_TRIGGER_WEBHOOK };
