/* eslint-disable @n8n/community-nodes/no-restricted-imports -- end-to-end tooling, never shipped */
/**
 * Redis and PostgreSQL from Debian's packages, started by the suite on loopback as its own
 * processes with their own data folders, and stopped with it.
 */
import { existsSync } from 'node:fs';
import { chown, mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import { ensureDebianPackages } from './debian';
import { freePort, run, startService, stopService, waitUntil, type Service } from './processes';

export interface LocalService {
	port: number;
	service: Service;
	stop(): Promise<void>;
}

const portOpen = (port: number) =>
	new Promise<boolean>((resolve) => {
		const socket = net.connect(port, '127.0.0.1');
		socket.once('connect', () => {
			socket.end();
			resolve(true);
		});
		socket.once('error', () => resolve(false));
	});

/**
 * Redis in `dataDir` (emptied first). `persistent`: an append-only file, as a Redis kept for n8n's
 * queue is run, so that `restart` finds the queue as it was; otherwise a restart starts empty.
 */
export async function startRedis(dataDir: string, { persistent = false }: { persistent?: boolean } = {}): Promise<LocalService & { restart(): Promise<void> }> {
	await ensureDebianPackages(['redis-server'], '/usr/bin/redis-server');
	await rm(dataDir, { recursive: true, force: true });
	await mkdir(dataDir, { recursive: true });
	const port = await freePort();
	const start = async () => {
		const started = startService('redis', '/usr/bin/redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dataDir, '--save', '', '--appendonly', persistent ? 'yes' : 'no', '--daemonize', 'no'], {
			logFile: join(dataDir, 'redis.log'),
		});
		await waitUntil(`Redis on ${port}`, () => portOpen(port), 20_000);
		return started;
	};
	const redis = { port, service: await start(), stop: () => stopService(redis.service), restart: async () => {
		await stopService(redis.service);
		redis.service = await start();
	} };
	return redis;
}

/** PostgreSQL refuses to run as root: it runs as the `postgres` user, in a folder that user can reach. */
export async function startPostgres(): Promise<LocalService & { database: string; user: string; sql(statement: string): Promise<string> }> {
	const bin = '/usr/lib/postgresql/15/bin';
	await ensureDebianPackages(['postgresql'], join(bin, 'postgres'));
	const port = await freePort();
	// The cache lives under root's home, which the postgres user cannot enter.
	const dataDir = join(tmpdir(), `omni-video-e2e-postgres-${port}`);
	await rm(dataDir, { recursive: true, force: true });
	await mkdir(dataDir, { recursive: true });
	const uid = Number((await run('id', ['-u', 'postgres'], { quiet: true })).trim());
	const gid = Number((await run('id', ['-g', 'postgres'], { quiet: true })).trim());
	await chown(dataDir, uid, gid);
	const asPostgres = (command: string, args: string[]) => ['-u', 'postgres', '--', command, ...args];
	await run('runuser', asPostgres(join(bin, 'initdb'), ['-D', join(dataDir, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8']), { quiet: true, label: 'initdb' });
	const service = startService('postgres', 'runuser', asPostgres(join(bin, 'postgres'), ['-D', join(dataDir, 'data'), '-p', String(port), '-k', dataDir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off']), {
		logFile: join(tmpdir(), `omni-video-e2e-postgres-${port}.log`),
	});
	await waitUntil(`PostgreSQL on ${port}`, () => portOpen(port), 30_000);
	await waitUntil('PostgreSQL accepting connections', async () => {
		await run('runuser', asPostgres('/usr/bin/psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-c', 'CREATE DATABASE n8n']), { quiet: true });
		return true;
	}, 30_000, 500);
	return {
		port,
		service,
		database: 'n8n',
		user: 'postgres',
		/** One statement in n8n's database; its rows unaligned, `|` between columns. */
		sql: (statement: string) => run('runuser', asPostgres('/usr/bin/psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', 'n8n', '-At', '-c', statement]), { quiet: true }),
		stop: async () => {
			await stopService(service);
			if (existsSync(dataDir)) await rm(dataDir, { recursive: true, force: true });
		},
	};
}
