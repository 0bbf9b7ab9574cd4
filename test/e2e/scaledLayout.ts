/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/require-node-api-error -- end-to-end tooling, never shipped */
/**
 * n8n scaled out as n8n's Helm chart lays it out (n8n-io/n8n-hosting, charts/n8n): PostgreSQL,
 * Redis, a main process (editor, API, timers; production webhooks off), two workers, and two
 * webhook processes (`n8n webhook`) behind a round-robin proxy that takes `/webhook/`,
 * `/webhook-waiting/` and the form paths; everything else goes to main. The webhook URL
 * (N8N_WEBHOOK_URL, WEBHOOK_URL before 2.x) on every process is the proxy's address, so every
 * resume URL n8n hands out goes through it. Manual executions run on the workers (n8n 3.0's only way).
 * As in the chart, only main keeps its n8n folder: each worker and webhook process starts in a
 * fresh one of its own (a new pod: the image's files, here our package, and nothing else).
 */
import { cp, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { SandboxOptions } from '../../sandbox';
import { cacheDir, ensureN8n, webhookUrlEnv } from './cache';
import type { Context } from './context';
import { startEnvironment, type Environment } from './environment';
import { baseEnv, N8nServer } from './n8nServer';
import type { Service } from './processes';
import { freePort, stopService, waitUntil } from './processes';
import { startPostgres, startRedis } from './queueServices';
import { startRoundRobinProxy, type RoundRobinProxy } from './roundRobinProxy';

export const WORKERS = ['worker-1', 'worker-2'];
export const WEBHOOK_PROCESSES = ['webhook-1', 'webhook-2'];

export interface ScaledLayout {
	/** Scenarios talk to main (REST, public API) and post webhooks through the proxy. */
	context: Context;
	environment: Environment;
	proxy: RoundRobinProxy;
	/** The folder the processes' logs are written to (`<name>.log`). */
	userFolder: string;
	/** The workers' names, those started again included (their logs say what they ran). */
	workers: string[];
	webhooks: string[];
	/** Starts a worker again under `name` (after a check stopped one); replaces `index`. */
	restartWorker(index: number, name: string): Promise<void>;
	stopWorker(index: number): Promise<void>;
	/** Every n8n process stopped (workers and webhook processes first) and started again, as a deploy does; `tag` names the new logs. */
	restart(tag: string): Promise<void>;
	/** Every n8n process stopped and started again on n8n `version` (installed beforehand), on the same database and Redis. */
	upgrade(version: string, tag: string): Promise<void>;
	/** Redis stopped and started again on its port (its queue kept when the layout keeps it on disk). */
	restartRedis(): Promise<void>;
	/** The n8n processes running now, by name (main, workers, webhook processes). */
	processes(): Array<{ name: string; pid: number }>;
	/** The size of n8n's database, in bytes. */
	databaseBytes(): Promise<number>;
	/** One statement in n8n's database (psql's unaligned rows, `|` between columns). */
	sql(statement: string): Promise<string>;
	stop(): Promise<void>;
}

export interface ScaledLayoutOptions {
	/** More of the sandbox's settings (its clock for clients, drawn faults) and its speed. */
	sandboxOptions?: SandboxOptions;
	sandboxSpeed?: number;
	/** More settings for every n8n process (execution pruning, say). */
	n8nEnv?: Record<string, string>;
	/** Redis keeps its queue on disk across its restarts (an append-only file). */
	persistentRedis?: boolean;
}

/** The settings every process of the layout shares (besides baseEnv's). */
function sharedSettings(version: string, postgresPort: number, database: string, user: string, redisPort: number, webhookUrl: string): Record<string, string> {
	return {
		DB_TYPE: 'postgresdb',
		DB_POSTGRESDB_HOST: '127.0.0.1',
		DB_POSTGRESDB_PORT: String(postgresPort),
		DB_POSTGRESDB_DATABASE: database,
		DB_POSTGRESDB_USER: user,
		DB_POSTGRESDB_PASSWORD: '',
		EXECUTIONS_MODE: 'queue',
		QUEUE_BULL_REDIS_HOST: '127.0.0.1',
		QUEUE_BULL_REDIS_PORT: String(redisPort),
		// Workers cannot read main's disk: binary data goes to the database.
		N8N_DEFAULT_BINARY_DATA_MODE: 'database',
		// The public address of every webhook and resume URL: the load balancer.
		...webhookUrlEnv(version, `${webhookUrl}/`),
		// Manual executions run on the workers too: n8n 3.0's only way, an option before it.
		OFFLOAD_MANUAL_EXECUTIONS_TO_WORKERS: 'true',
		// Production webhooks are the webhook processes' work, as in the chart.
		N8N_DISABLE_PRODUCTION_MAIN_PROCESS: 'true',
		N8N_LOG_LEVEL: 'info',
	};
}

export async function startScaledLayout(version: string, tarball: string, options: ScaledLayoutOptions = {}): Promise<ScaledLayout> {
	const folder = join(cacheDir(), 'data', `n8n-${version}-queue`);
	const stops: Array<() => Promise<void>> = [];
	const stopAll = async () => {
		for (const stop of stops.reverse()) await stop();
	};
	try {
		const postgres = await startPostgres();
		stops.push(() => postgres.stop());
		const redis = await startRedis(join(cacheDir(), 'data', 'redis'), { persistent: options.persistentRedis });
		stops.push(() => redis.stop());
		const mainPort = await freePort();
		const webhookPorts = [await freePort(), await freePort()];
		const proxy = await startRoundRobinProxy({ main: { name: 'main', port: mainPort }, webhooks: WEBHOOK_PROCESSES.map((name, i) => ({ name, port: webhookPorts[i] })) });
		stops.push(() => proxy.close());
		const settingsFor = (forVersion: string) => ({ ...sharedSettings(forVersion, postgres.port, postgres.database, postgres.user, redis.port, proxy.url), ...options.n8nEnv });
		const environment = await startEnvironment({ version, tarball, userFolder: folder, n8nEnv: settingsFor(version), n8nPort: mainPort, sandboxSpeed: options.sandboxSpeed, sandboxOptions: options.sandboxOptions });
		stops.push(() => environment.stop());
		let { n8n } = environment;
		// The n8n of now, after an upgrade too (the environment stops the one it started).
		stops.push(() => n8n.stop());
		/**
		 * A fresh n8n folder for the process `name`, holding only the installed package, as a pod
		 * started from an image with the node in it. Not the main's: a worker that starts with the
		 * event log its previous run wrote there (a folder kept or shared) marks every execution it
		 * had parked as crashed (n8n's log recovery in queue mode; docs/n8n.md, queue mode).
		 */
		const podFolder = async (name: string): Promise<Record<string, string>> => {
			const podHome = join(folder, 'pods', name);
			await rm(podHome, { recursive: true, force: true });
			await mkdir(join(podHome, '.n8n'), { recursive: true });
			await cp(join(folder, '.n8n', 'nodes'), join(podHome, '.n8n', 'nodes'), { recursive: true });
			return { N8N_USER_FOLDER: podHome };
		};
		const workers: Service[] = [];
		const startWorker = async (name: string) => {
			const worker = n8n.spawn(name, ['worker', '--concurrency=10'], { ...(await podFolder(name)), N8N_RUNNERS_BROKER_PORT: String(await freePort()), QUEUE_HEALTH_CHECK_ACTIVE: 'true', QUEUE_HEALTH_CHECK_PORT: String(await freePort()), N8N_PORT: String(await freePort()) });
			await waitUntil(`${name} ready`, async () => /started|ready|Worker/i.test(worker.tail()) && worker.child.exitCode === null, 120_000, 500);
			return worker;
		};
		stops.push(async () => {
			for (const worker of workers) await stopService(worker);
		});
		workers.push(await startWorker(WORKERS[0]), await startWorker(WORKERS[1]));
		const startWebhooks = async (suffix = '') => {
			for (const [i, name] of WEBHOOK_PROCESSES.entries()) {
				const webhook = n8n.spawn(`${name}${suffix}`, ['webhook'], { ...(await podFolder(`${name}${suffix}`)), N8N_PORT: String(webhookPorts[i]), N8N_RUNNERS_BROKER_PORT: String(await freePort()) });
				await waitUntil(`${name}`, async () => {
					if (webhook.child.exitCode !== null) throw new Error(webhook.tail());
					return (await fetch(`http://127.0.0.1:${webhookPorts[i]}/healthz`)).ok;
				}, 120_000, 500);
			}
		};
		await startWebhooks();
		const workerNames = [...WORKERS];
		const context: Context = { ...environment.context, webhookUrl: proxy.url, webhookProcesses: webhookPorts.map((port) => `http://127.0.0.1:${port}`) };
		const startWorkersAndWebhooks = async (tag: string) => {
			for (const [index, name] of WORKERS.entries()) {
				workers[index] = await startWorker(`${name}-${tag}`);
				workerNames.push(`${name}-${tag}`);
			}
			await startWebhooks(`-${tag}`);
		};
		return {
			context,
			environment,
			proxy,
			userFolder: n8n.userFolder,
			workers: workerNames,
			webhooks: WEBHOOK_PROCESSES,
			restartWorker: async (index, name) => {
				workers[index] = await startWorker(name);
				workerNames.push(name);
			},
			stopWorker: (index) => stopService(workers[index]),
			restart: async (tag) => {
				// n8n.restart stops every process it spawned (workers and webhook processes first), then starts main.
				await n8n.restart(`main-${tag}`);
				await startWorkersAndWebhooks(tag);
			},
			upgrade: async (nextVersion, tag) => {
				await ensureN8n(nextVersion);
				await n8n.stop();
				// The same folder, database, Redis and port: what an image upgrade keeps. Main migrates the database as it starts.
				const next = new N8nServer(nextVersion, n8n.url, n8n.userFolder, baseEnv(nextVersion, n8n.userFolder, mainPort, { N8N_RUNNERS_BROKER_PORT: String(await freePort()), ...settingsFor(nextVersion) }));
				next.apiKey = n8n.apiKey;
				await next.waitReady(next.spawn(`main-${tag}`, ['start']));
				// A client of its own, so a session of its own: n8n binds the old one to the old client's browser id.
				await next.logIn();
				n8n = next;
				environment.n8n = next;
				context.n8n = next;
				context.version = nextVersion;
				await startWorkersAndWebhooks(tag);
			},
			restartRedis: () => redis.restart(),
			processes: () => n8n.services.filter((service) => service.child.exitCode === null && service.child.pid !== undefined).map((service) => ({ name: service.name, pid: service.child.pid! })),
			databaseBytes: async () => Number((await postgres.sql('SELECT pg_database_size(current_database())')).trim()),
			sql: (statement) => postgres.sql(statement),
			stop: stopAll,
		};
	} catch (error) {
		await stopAll();
		throw error;
	}
}
