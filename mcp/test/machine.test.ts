import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { keyFingerprint, normaliseBaseUrl } from '../../core';
import { planRecordName } from '../src/planRecords';
import { recordFileName } from '../src/state/fileStore';
import { basename, join } from 'node:path';
import { call, counts, overStdio, RUN_ROWS, sandboxFor, serverEnv, stateDir, type Connected } from './support/mcpHarness';

jest.setTimeout(240_000);

/**
 * Several server processes on one machine and one key, as a user with two clients runs them: one
 * records folder, so one ledger, one spend cap and one plan (docs/mcp.md#where-the-records-live).
 */
describe.each(RUN_ROWS)('server processes sharing one records folder, --service %s, the %s client', (reading, _client, { client: kind }) => {
	const servers: Connected[] = [];
	afterEach(async () => {
		await Promise.all(servers.splice(0).map((server) => server.close()));
	});
	const start = async (env: Record<string, string>) => {
		const server = await overStdio(env, [], kind);
		servers.push(server);
		return server;
	};

	it('a retry in the second process of a call made in the first gets the same job', async () => {
		const sandbox = await sandboxFor(reading);
		try {
			const env = serverEnv(sandbox);
			const [first, second] = [await start(env), await start(env)];
			const args = { prompt: 'A fox in the snow', resolution: '720P', duration: 4, waitSeconds: 0 };
			const made = await call(first.client, 'generate_video', args);
			const retried = await call(second.client, 'generate_video', args);
			expect(retried.output).toMatchObject({ jobId: made.output.jobId, retried: true });
			// Asked at the same moment in both, one create is sent.
			const both = await Promise.all([first, second].map((server) => call(server.client, 'generate_video', { ...args, prompt: 'An owl at dusk', waitSeconds: 20 })));
			expect(both[0].output.jobId).toBe(both[1].output.jobId);
			expect(counts(sandbox).creates).toBe(2);
		} finally {
			await sandbox.close();
		}
	});

	it('counts the spend cap across both processes', async () => {
		const sandbox = await sandboxFor(reading);
		try {
			// 720P at 4 s costs 20 credits: the cap leaves room for one, whichever process asks.
			const env = serverEnv(sandbox, { OMNI_VIDEO_SPEND_CAP_CREDITS: '30', OMNI_VIDEO_SPEND_CAP_HOURS: '1' });
			const [first, second] = [await start(env), await start(env)];
			const made = await call(first.client, 'generate_video', { prompt: 'One for the cap', resolution: '720P', duration: 4, waitSeconds: 0 });
			expect(made.isError).toBeFalsy();
			const refused = await call(second.client, 'generate_video', { prompt: 'Past the cap', resolution: '720P', duration: 4, waitSeconds: 0 });
			expect(refused.isError).toBe(true);
			expect(refused.text).toMatch(/spend cap is 30 credits per 1 h, 20 are spent/);
			expect(counts(sandbox).creates).toBe(1);
		} finally {
			await sandbox.close();
		}
	});
});

describe('the records folder when things go wrong', () => {
	it('a damaged record: the server says so in one line, sets it aside and works', async () => {
		const sandbox = await sandboxFor('default');
		const dir = stateDir();
		mkdirSync(join(dir, 'records'));
		const plan = join(dir, 'records', recordFileName(planRecordName(keyFingerprint(sandbox.keys.pro, normaliseBaseUrl(sandbox.url)))));
		writeFileSync(plan, '{"value": {"sent": [17');
		// A 2025 client: one that negotiates starts a server of its own first to ask which era it speaks,
		// and that one, not the server the test reads, would be the one to find the file.
		const server = await overStdio(serverEnv(sandbox, { OMNI_VIDEO_MCP_STATE_DIR: dir }), [], 'v1');
		try {
			const made = await call(server.client, 'generate_video', { prompt: 'After the damage', resolution: '720P', duration: 4, waitSeconds: 0 });
			expect(made.isError).toBeFalsy();
			expect(server.log().split('\n').filter((line) => line.includes('could not be read'))).toHaveLength(1);
			expect(readdirSync(join(dir, 'records')).filter((file) => file.startsWith(`${basename(plan)}.damaged-`))).toHaveLength(1);
		} finally {
			await server.close();
			await sandbox.close();
		}
	});

	it('a process killed while it holds the lock: the next server goes on within seconds', async () => {
		const sandbox = await sandboxFor('default');
		const dir = stateDir();
		mkdirSync(join(dir, 'records'));
		const lock = join(dir, 'records', `${recordFileName(planRecordName(keyFingerprint(sandbox.keys.pro, normaliseBaseUrl(sandbox.url))))}.lock`);
		// A process that takes the key's plan record's lock as the server does (every create claims a request there), and is killed holding it.
		const holder = spawn(process.execPath, ['-e', `require('fs').writeFileSync(${JSON.stringify(lock)}, process.pid + ' ' + Date.now(), { flag: 'wx' }); setInterval(() => {}, 1000);`]);
		await new Promise((resolve) => setTimeout(resolve, 500));
		holder.kill('SIGKILL');
		await new Promise((resolve) => holder.once('exit', resolve));
		const server = await overStdio(serverEnv(sandbox, { OMNI_VIDEO_MCP_STATE_DIR: dir }));
		try {
			const started = Date.now();
			const made = await call(server.client, 'generate_video', { prompt: 'After the crash', resolution: '720P', duration: 4, waitSeconds: 0 });
			expect(made.isError).toBeFalsy();
			expect(Date.now() - started).toBeLessThan(5_000);
		} finally {
			await server.close();
			await sandbox.close();
		}
	});
});
