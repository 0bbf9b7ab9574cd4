/* eslint-disable @n8n/community-nodes/no-restricted-imports -- a measurement run by hand, never shipped */
/**
 * What the soak reads each simulated hour: each n8n process's resident memory (with the task
 * runners it started), the database's size, and the rows by status.
 */
import { readFile, readdir } from 'node:fs/promises';

export interface Sample {
	/** Simulated hours since the run began. */
	hour: number;
	/** Resident memory by process role (main, worker-1, …, webhook-2), MiB. */
	memoryMiB: Record<string, number>;
	databaseMiB: number;
	rows: Record<string, number>;
	/** Requests the key sent the service so far, and jobs made. */
	requests: number;
	jobs: number;
}

const MIB = 1024 * 1024;

/** A process's role, its restart tag dropped: `worker-1-r2` → `worker-1`, `main-upgrade` → `main`. */
export function roleOf(name: string): string {
	const match = /^(main|worker-\d+|webhook-\d+)/.exec(name);
	return match ? match[1] : name;
}

async function childrenOf(pid: number): Promise<number[]> {
	const found: number[] = [];
	try {
		for (const task of await readdir(`/proc/${pid}/task`)) {
			const text = await readFile(`/proc/${pid}/task/${task}/children`, 'utf8').catch(() => '');
			found.push(...text.split(/\s+/).filter(Boolean).map(Number));
		}
	} catch {
		// The process has ended meanwhile.
	}
	return found;
}

async function rssBytes(pid: number): Promise<number> {
	const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
	const kib = /VmRSS:\s+(\d+) kB/.exec(status);
	return kib ? Number(kib[1]) * 1024 : 0;
}

/** Resident memory of `pid` and every process under it (n8n's task runners), in bytes. */
export async function treeRssBytes(pid: number): Promise<number> {
	let total = await rssBytes(pid);
	for (const child of await childrenOf(pid)) total += await treeRssBytes(child);
	return total;
}

/** Memory by role, MiB, one decimal. */
export async function memoryByRole(processes: Array<{ name: string; pid: number }>): Promise<Record<string, number>> {
	const bytes: Record<string, number> = {};
	for (const { name, pid } of processes) bytes[roleOf(name)] = (bytes[roleOf(name)] ?? 0) + (await treeRssBytes(pid));
	return Object.fromEntries(Object.entries(bytes).map(([role, total]) => [role, toMiB(total)]));
}

export const toMiB = (bytes: number) => Math.round((bytes / MIB) * 10) / 10;
