/* eslint-disable no-console, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-dangerous-functions -- benchmarks run by people and CI, never shipped */
/**
 * `npm run bench`: measures what the README promises. Request counts and pacing run on virtual
 * time against the in-memory fake API (exact and repeatable); startup, throughput and memory run
 * for real against the sandbox on 127.0.0.1. Results go to bench/results.md and results.json.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { cpus, totalmem } from 'node:os';
import { startSandbox } from '../sandbox';
import { createNodeClient } from '../node-host/runtime';
import { PLANS, type PlanLimits } from '../core/types';
import { expectedRenderSeconds } from '../core/estimate';
import { fakeClient, maxInAnyWindow } from '../test/support/coreHarness';
import { startReceiver } from '../test/support/receiver';

interface Result {
	name: string;
	value: string;
	note: string;
}
const results: Result[] = [];
const record = (name: string, value: string, note = '') => {
	results.push({ name, value, note });
	console.log(`${name}: ${value}${note ? `  (${note})` : ''}`);
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Lookups a polled job costs when the real render time is `factor` × the estimate. */
async function lookupsPerJob(factor: number): Promise<number> {
	const { time, api, client } = fakeClient(PLANS.pro);
	const created = await time.run(client.generateVideo({ prompt: 'bench', resolution: '1080P', duration: 8 }));
	api.renderMs = created.expectedMs * factor;
	api.jobs.get(created.job.id)!.doneAt = time.clock.now() + api.renderMs;
	await time.run(client.waitForJob(created.job.id, { expectedMs: created.expectedMs }));
	return api.lookups().length;
}

/** A burst of creates-and-waits on a plan, on virtual time: pacing, concurrency, 429s. */
async function burst(count: number, clientLimits: PlanLimits, serverLimits: PlanLimits) {
	const { time, api, client } = fakeClient(clientLimits);
	api.limits = serverLimits;
	api.renderMs = 56_000;
	const start = time.clock.now();
	const outcomes = await time.run(
		Promise.all(
			Array.from({ length: count }, async (_, i) => {
				const created = await client.generateVideo({ prompt: `row ${i}` });
				return client.waitForJob(created.job.id, { expectedMs: created.expectedMs });
			}),
		).then(
			() => 'ok',
			(error: Error) => error.message,
		),
	);
	const times = api.apiRequests().map((r) => r.at);
	return {
		outcome: outcomes,
		minutes: (time.clock.now() - start) / 60_000,
		requests: api.apiRequests().length,
		rejected: api.rejected429.length,
		perMinute: maxInAnyWindow(times, 60_000),
		perHour: maxInAnyWindow(times, 3_600_000),
		concurrency: api.maxConcurrentSeen,
	};
}

async function sandboxStartup(): Promise<number[]> {
	const samples: number[] = [];
	for (let i = 0; i < 5; i++) {
		const started = Date.now();
		const child = spawn(process.execPath, ['node_modules/tsx/dist/cli.mjs', 'sandbox/cli.ts', '--port', '0'], { cwd: join(__dirname, '..') });
		await new Promise<void>((resolve, reject) => {
			child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('listening on') && resolve());
			child.on('exit', () => reject(new Error('sandbox exited')));
		});
		samples.push(Date.now() - started);
		child.kill('SIGTERM');
		await new Promise((resolve) => child.once('exit', resolve));
	}
	return samples;
}

async function main(): Promise<void> {
	console.log('Omni Video benchmarks\n');

	// 1. Requests per job.
	for (const factor of [1, 0.75, 1.25, 1.5, 2]) {
		record(`lookups per polled job, render = ${factor} × estimate`, String(await lookupsPerJob(factor)), '1080P 8 s, estimate 56 s');
	}
	const unlimited = { requestsPerMinute: 1e9, requestsPerHour: 1e9, concurrentJobs: 1e9 };
	const sandbox = await startSandbox({
		port: 0,
		speed: 100,
		insecureCallbacks: true,
		largeFileBytes: 256 * 1024 * 1024,
		accounts: [
			{ id: 'acct_premium', plan: 'premium', balance: 100_000, userId: 'user_premium' },
			{ id: 'acct_bench', plan: unlimited, balance: 100_000 },
		],
		keys: [
			{ key: 'omni_test_premium', account: 'acct_premium', label: 'Premium' },
			{ key: 'omni_test_bench', account: 'acct_bench', label: 'bench' },
		],
	});
	const receiver = await startReceiver([200]);
	const client = createNodeClient({ baseUrl: sandbox.url, apiKey: sandbox.keys.premium, plan: 'premium' });
	for (const signed of [true, false]) {
		sandbox.reset();
		const created = await client.generateVideo({ prompt: 'bench callback', callbackUrl: receiver.url }, { allowInsecureLoopbackCallback: true });
		await receiver.waitFor(receiver.received.length + 1);
		const delivery = receiver.received.at(-1)!;
		const outcome = await client.handleCallback({ headers: delivery.headers, rawBody: delivery.body, secret: signed ? sandbox.webhookSecret : undefined });
		if (!outcome.accepted || outcome.job.id !== created.job.id) throw new Error('callback not accepted');
		const requests = sandbox.journal.filter((e) => e.path.startsWith('/api/')).length;
		record(`API requests per job, callback ${signed ? 'with signing secret' : 'without secret (confirmed by lookup)'}`, String(requests), 'sandbox over HTTP');
	}

	// 2. Pacing.
	const pro = await burst(50, PLANS.pro, PLANS.pro);
	record('50 rows on Pro, waiting for each video: 429s', String(pro.rejected), `${pro.requests} requests in ${pro.minutes.toFixed(1)} virtual minutes`);
	record('50 rows on Pro: most requests in any minute / hour', `${pro.perMinute} / ${pro.perHour}`, 'limits 30 / 200');
	record('50 rows on Pro: most jobs at once', String(pro.concurrency), 'limit 5');
	const unpaced = await burst(50, { requestsPerMinute: 100_000, requestsPerHour: 100_000, concurrentJobs: 100 }, PLANS.pro);
	record('the same batch with the plan set far too high: 429s met (then waited out)', String(unpaced.rejected), `finished: ${unpaced.outcome}`);
	const expected = expectedRenderSeconds('1080P', 8);
	record('render-time estimate used for the first look, 1080P 8 s', `${expected} s`, '30 s (720P 4 s) to 90 s (4K 10 s)');

	// 3. Sandbox.
	const startup = await sandboxStartup();
	record('sandbox start to listening, median of 5', `${median(startup)} ms`, `samples ${startup.join(', ')} ms; npm adds ~0.3 s`);
	// A key whose account has no practical limits: this measures the code path, not the plan.
	const fast = createNodeClient({ baseUrl: sandbox.url, apiKey: 'omni_test_bench', plan: unlimited });
	sandbox.reset();
	const lookups = 2_000;
	const t0 = process.hrtime.bigint();
	for (let i = 0; i < lookups; i += 50) {
		await Promise.all(Array.from({ length: 50 }, () => fast.getJob('job_bench').catch(() => undefined)));
	}
	const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
	record('lookups through core against the sandbox (50 in flight)', `${Math.round(lookups / seconds)} /s`, `${lookups} requests on a key without practical limits`);

	// 4. Memory: a 256 MB video streamed end to end stays flat.
	sandbox.reset();
	const big = await client.generateVideo({ prompt: 'big [sandbox:large-output]', resolution: '720P', duration: 4 });
	sandbox.clock.advance(60_000);
	const job = await client.getJob(big.job.id);
	global.gc?.();
	const before = process.memoryUsage().rss;
	let peak = before;
	let bytes = 0;
	const response = await fetch(job.resultUrls[0]);
	await pipeline(
		Readable.fromWeb(response.body as import('node:stream/web').ReadableStream),
		new Writable({
			write(chunk: Buffer, _encoding, done) {
				bytes += chunk.length;
				peak = Math.max(peak, process.memoryUsage().rss);
				done();
			},
		}),
	);
	record('256 MB video streamed from the sandbox CDN: RSS growth', `${((peak - before) / 1024 / 1024).toFixed(1)} MB`, `${(bytes / 1024 / 1024).toFixed(0)} MB received; server and client in one process`);

	await receiver.close();
	await sandbox.close();

	const machine = `${cpus().length} cores, ${(totalmem() / 1024 ** 3).toFixed(0)} GiB, Node ${process.version}`;
	const table = results.map((r) => `| ${r.name} | ${r.value} | ${r.note} |`).join('\n');
	writeFileSync(
		join(__dirname, 'results.md'),
		`# Benchmark results\n\nMade by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)} (${machine}). Request counts and pacing run on virtual time against the in-memory fake API and are exact; times and memory are real.\n\n| Measure | Value | Notes |\n|---|---|---|\n${table}\n`,
	);
	writeFileSync(join(__dirname, 'results.json'), `${JSON.stringify({ machine, results }, null, 2)}\n`);
	console.log('\nWritten to bench/results.md and bench/results.json');
}

main().catch((error: unknown) => {
	console.error(error);
	process.exit(1);
});
