/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-dangerous-functions -- benchmarks run by people, never shipped */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { corePolling } from './strategies';
import type { Sandbox } from '../sandbox';

export interface CpuResult {
	jobs: number;
	cpuMsPerJob: number;
	requestsPerJob: number;
	realMs: number;
}

const UNLIMITED = { requestsPerMinute: 1e9, requestsPerHour: 1e9, concurrentJobs: 1e9 };

/**
 * CPU time per job spent by core (create, then wait by polling) for batches of each size, on a
 * key without practical limits. The sandbox runs in a child process, so that this process's CPU
 * time is the client's alone; the client reads the sandbox's clock from its admin API (the
 * sandbox's virtual time is linear in real time).
 */
export async function cpuPerJob(sizes: number[], speed: number): Promise<CpuResult[]> {
	const dir = mkdtempSync(join(tmpdir(), 'omni-bench-'));
	const config = join(dir, 'sandbox.json');
	writeFileSync(
		config,
		JSON.stringify({
			clientClock: 'sandbox',
			insecureCallbacks: true,
			accounts: [{ id: 'acct_bench', plan: UNLIMITED, balance: 1e9, userId: 'user_bench' }],
			keys: [{ key: 'omni_test_bench', account: 'acct_bench', label: 'bench' }],
		}),
	);
	const child = spawn(process.execPath, [join(__dirname, '../node_modules/tsx/dist/cli.mjs'), join(__dirname, '../sandbox/cli.ts'), '--port', '0', '--speed', String(speed), '--config', config]);
	try {
		const url = await new Promise<string>((resolve, reject) => {
			child.stdout.on('data', (chunk: Buffer) => {
				const found = /listening on (http:\/\/\S+)/.exec(chunk.toString());
				if (found) resolve(found[1]);
			});
			child.once('exit', () => reject(new Error('the sandbox exited')));
		});
		const admin = async <T>(path: string, method = 'GET'): Promise<T> => (await (await fetch(`${url}${path}`, { method })).json()) as T;
		const results: CpuResult[] = [];
		for (const jobs of sizes) {
			await admin('/__sandbox/reset', 'POST');
			const read = await admin<{ now: string }>('/__sandbox/clock');
			const [virtualAt, realAt] = [Date.parse(read.now), Date.now()];
			// Only what the strategy reads of a sandbox: its URL and clock.
			const remote = { url, clock: { now: () => virtualAt + (Date.now() - realAt) * speed } } as unknown as Sandbox;
			const cpu = process.cpuUsage();
			const started = Date.now();
			const outcome = await corePolling({ sandbox: remote, apiKey: 'omni_test_bench', limits: UNLIMITED, rows: jobs, speed });
			const used = process.cpuUsage(cpu);
			if (outcome.failedRows > 0) throw new Error(`${outcome.failedRows} of ${jobs} jobs failed`);
			const journal = await admin<Array<{ path: string }>>('/__sandbox/requests');
			results.push({
				jobs,
				cpuMsPerJob: (used.user + used.system) / 1000 / jobs,
				requestsPerJob: journal.filter((entry) => entry.path.startsWith('/api/')).length / jobs,
				realMs: Date.now() - started,
			});
		}
		return results;
	} finally {
		child.kill('SIGTERM');
	}
}
