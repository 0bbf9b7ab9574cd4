/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- benchmarks run by people, never shipped */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createNodeClient } from '../node-host/runtime';
import { startSandbox } from '../sandbox';

export interface MemoryResult {
	mode: 'default' | 'filesystem';
	fileBytes: number;
	/** Peak RSS (kernel maxRSS) minus the RSS before the download. */
	peakGrowthBytes: number;
	sampledGrowthBytes: number;
	storedAs: string;
}

/**
 * Peak memory of a `fileBytes` video downloaded by the n8n node (Get Job with Download Video,
 * n8n's engine) in each binary data mode, each in a child process of its own; the sandbox that
 * serves the file runs here, so that its buffers are not counted.
 */
export async function downloadMemory(fileBytes: number): Promise<MemoryResult[]> {
	const sandbox = await startSandbox({ port: 0, speed: 100, largeFileBytes: fileBytes });
	try {
		const client = createNodeClient({ baseUrl: sandbox.url, apiKey: sandbox.keys.premium, plan: 'premium' });
		const created = await client.generateVideo({ prompt: 'big [sandbox:large-output]', resolution: '720P', duration: 4 });
		sandbox.clock.advance(120_000);
		const results: MemoryResult[] = [];
		for (const mode of ['default', 'filesystem'] as const) {
			const { stdout } = await promisify(execFile)(
				process.execPath,
				['--expose-gc', join(__dirname, '../node_modules/tsx/dist/cli.mjs'), join(__dirname, 'memoryChild.ts'), sandbox.url, sandbox.keys.premium, created.job.id],
				{ env: { ...process.env, N8N_DEFAULT_BINARY_DATA_MODE: mode, N8N_AVAILABLE_BINARY_DATA_MODES: 'filesystem' }, maxBuffer: 1 << 20 },
			);
			const line = JSON.parse(stdout.trim().split('\n').at(-1)!) as { before: number; maxRss: number; sampled: number; stored: number; storedAs: string };
			if (line.stored !== fileBytes) throw new Error(`${mode}: stored ${line.stored} bytes, expected ${fileBytes}`);
			results.push({ mode, fileBytes, peakGrowthBytes: line.maxRss - line.before, sampledGrowthBytes: line.sampled - line.before, storedAs: line.storedAs });
		}
		return results;
	} finally {
		await sandbox.close();
	}
}
