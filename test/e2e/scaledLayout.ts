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
import { cacheDir, webhookUrlEnv } from './cache';
import type { Context } from './context';
import { startEnvironment, type Environment } from './environment';
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
	stop(): Promise<void>;
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

export async function startScaledLayout(version: string, tarball: string): Promise<ScaledLayout> {
	const folder = join(cacheDir(), 'data', `n8n-${version}-queue`);
	const stops: Array<() => Promise<void>> = [];
	const stopAll = async () => {
		for (const stop of stops.reverse()) await stop();
	};
	try {
		const postgres = await startPostgres();
		stops.push(() => postgres.stop());
		const redis = await startRedis(join(cacheDir(), 'data', 'redis'));
		stops.push(() => redis.stop());
		const mainPort = await freePort();
		const webhookPorts = [await freePort(), await freePort()];
		const proxy = await startRoundRobinProxy({ main: { name: 'main', port: mainPort }, webhooks: WEBHOOK_PROCESSES.map((name, i) => ({ name, port: webhookPorts[i] })) });
		stops.push(() => proxy.close());
		const settings = sharedSettings(version, postgres.port, postgres.database, postgres.user, redis.port, proxy.url);
		const environment = await startEnvironment({ version, tarball, userFolder: folder, n8nEnv: settings, n8nPort: mainPort });
		stops.push(() => environment.stop());
		const { n8n } = environment;
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
		return {
			context: { ...environment.context, webhookUrl: proxy.url, webhookProcesses: webhookPorts.map((port) => `http://127.0.0.1:${port}`) },
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
				for (const [index, name] of WORKERS.entries()) {
					workers[index] = await startWorker(`${name}-${tag}`);
					workerNames.push(`${name}-${tag}`);
				}
				await startWebhooks(`-${tag}`);
			},
			stop: stopAll,
		};
	} catch (error) {
		await stopAll();
		throw error;
	}
}
