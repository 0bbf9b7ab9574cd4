/* eslint-disable no-console, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-dangerous-functions -- end-to-end tooling, never shipped */
/**
 * The processes the suite starts (n8n, its workers, Redis, PostgreSQL, Chromium through
 * Playwright), each in its own process group, and stopped on success, on failure and on Ctrl-C:
 * nothing the suite started may outlive it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import net from 'node:net';

export interface Service {
	name: string;
	child: ChildProcess;
	/** Ends when the process has exited. */
	exited: Promise<number | null>;
	/** The last lines it printed, for an error message. */
	tail(): string;
}

const services = new Set<Service>();
const cleanups: Array<() => Promise<void>> = [];

/** Runs `fn` when the suite ends, whichever way it ends (last registered runs first). */
export function onShutdown(fn: () => Promise<void>): void {
	cleanups.push(fn);
}

/** Starts a long-running process in its own process group; its output goes to `logFile`. */
export function startService(
	name: string,
	command: string,
	args: string[],
	options: { env?: NodeJS.ProcessEnv; cwd?: string; logFile: string },
): Service {
	const log: WriteStream = createWriteStream(options.logFile, { flags: 'a' });
	const child = spawn(command, args, {
		cwd: options.cwd,
		env: options.env ?? process.env,
		detached: true,
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	const lines: string[] = [];
	const keep = (chunk: Buffer) => {
		log.write(chunk);
		lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
		if (lines.length > 40) lines.splice(0, lines.length - 40);
	};
	child.stdout?.on('data', keep);
	child.stderr?.on('data', keep);
	const exited = new Promise<number | null>((resolve) => {
		child.on('exit', (code) => resolve(code));
		child.on('error', () => resolve(-1));
	});
	const service: Service = { name, child, exited, tail: () => lines.join('\n') };
	services.add(service);
	void exited.then(() => {
		services.delete(service);
		log.end();
	});
	return service;
}

/** SIGTERM to the process group, SIGKILL after `graceMs`. */
export async function stopService(service: Service, graceMs = 10_000): Promise<void> {
	const { pid } = service.child;
	if (pid === undefined || service.child.exitCode !== null || service.child.signalCode !== null) return;
	const signal = (name: NodeJS.Signals) => {
		try {
			process.kill(-pid, name);
		} catch {
			// already gone
		}
	};
	signal('SIGTERM');
	const timer = setTimeout(() => signal('SIGKILL'), graceMs);
	await service.exited;
	clearTimeout(timer);
	// Children of the group leader (n8n's task runner) may linger after it: end the group.
	signal('SIGKILL');
}

let shuttingDown: Promise<void> | undefined;

/** Runs every cleanup and stops every process still running. Safe to call more than once. */
export function shutdown(): Promise<void> {
	shuttingDown ??= (async () => {
		for (const fn of cleanups.reverse()) {
			try {
				await fn();
			} catch (error) {
				console.error(`cleanup failed: ${String(error)}`);
			}
		}
		await Promise.all([...services].map((service) => stopService(service)));
	})();
	return shuttingDown;
}

/** Stops everything on Ctrl-C, on `kill`, and on a crash. */
export function stopAllOnExit(): void {
	for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
		process.once(signal, () => {
			console.log(`\n${signal}: stopping everything that was started…`);
			void shutdown().then(() => process.exit(130));
		});
	}
	process.once('uncaughtException', (error) => {
		console.error(error);
		void shutdown().then(() => process.exit(1));
	});
}

/** Runs a command to its end; prints a progress line every 20 s and the output tail on failure. */
export async function run(
	command: string,
	args: string[],
	options: { cwd?: string; env?: NodeJS.ProcessEnv; label?: string; log?: (line: string) => void; quiet?: boolean } = {},
): Promise<string> {
	const label = options.label ?? `${command} ${args.join(' ')}`;
	const log = options.log ?? console.log;
	const started = Date.now();
	const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
	let output = '';
	child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
	child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
	const ticker = options.quiet ? undefined : setInterval(() => log(`  … ${label}: ${Math.round((Date.now() - started) / 1000)} s`), 20_000);
	const code = await new Promise<number | null>((resolve) => {
		child.on('exit', resolve);
		child.on('error', () => resolve(-1));
	});
	if (ticker) clearInterval(ticker);
	if (code !== 0) throw new Error(`${label} failed (exit ${String(code)}):\n${output.slice(-3000)}`);
	return output;
}

/** A free TCP port on 127.0.0.1, never 5678 or 5679 (n8n's defaults for itself and its task broker). */
export async function freePort(): Promise<number> {
	for (;;) {
		const port = await new Promise<number>((resolve, reject) => {
			const server = net.createServer();
			server.once('error', reject);
			server.listen(0, '127.0.0.1', () => {
				const address = server.address() as net.AddressInfo;
				server.close(() => resolve(address.port));
			});
		});
		// The system may hand a closed port out again: never give one to two of our servers.
		if (port !== 5678 && port !== 5679 && !givenPorts.has(port)) {
			givenPorts.add(port);
			return port;
		}
	}
}

const givenPorts = new Set<number>();

/** Waits until `check` resolves true, or throws after `timeoutMs` with `what` in the message. */
export async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number, intervalMs = 250): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		try {
			if (await check()) return;
		} catch {
			// not yet
		}
		if (Date.now() > deadline) throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}`);
		await new Promise((resolve) => setTimeout(resolve, intervalMs));
	}
}
