/* eslint-disable @n8n/community-nodes/no-restricted-imports -- end-to-end tooling, never shipped */
/** What the queue-mode processes' own logs say about an execution: which worker ran it, how often. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

const readLog = (folder: string, name: string) => readFile(join(folder, `${name}.log`), 'utf8').catch(() => '');

/** How many times each process's log says it started `executionId` (a resume is a new start). */
export async function startsOf(folder: string, executionId: string, names: string[]): Promise<Record<string, number>> {
	const pattern = new RegExp(`started execution ${executionId}\\b`, 'gi');
	const counts: Record<string, number> = {};
	for (const name of names) counts[name] = ((await readLog(folder, name)).match(pattern) ?? []).length;
	return counts;
}

/** Which of the workers' logs says it started `executionId` first. */
export async function workerThatStarted(folder: string, executionId: string, names: string[]): Promise<string | undefined> {
	const counts = await startsOf(folder, executionId, names);
	return names.find((name) => counts[name] > 0);
}

/** Lines of the processes' logs that name `executionId` and match `pattern`, counted per process. */
export async function linesAbout(folder: string, executionId: string, names: string[], pattern: RegExp): Promise<Record<string, number>> {
	const counts: Record<string, number> = {};
	for (const name of names) {
		counts[name] = (await readLog(folder, name)).split('\n').filter((line) => line.includes(executionId) && pattern.test(line)).length;
	}
	return counts;
}

/** "worker-1 ×2, worker-2 ×1" (processes with none left out), or "none". */
export function perProcess(counts: Record<string, number>): string {
	const entries = Object.entries(counts).filter(([, count]) => count > 0);
	return entries.length ? entries.map(([name, count]) => `${name} ×${count}`).join(', ') : 'none';
}
