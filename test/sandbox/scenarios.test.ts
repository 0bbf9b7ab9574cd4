/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-dangerous-functions -- test tooling, never shipped: it starts the sandbox CLI as a user would */
import { spawn } from 'node:child_process';
import { startSandbox, SCENARIOS, type Sandbox } from '../../sandbox';
import { CheckedHttp } from '../support/checkedHttp';

let sandbox: Sandbox;
let http: CheckedHttp;

beforeAll(async () => {
	sandbox = await startSandbox({ port: 0, speed: 1, holdMs: 300, slowMs: 300, stormLength: 3 });
	http = new CheckedHttp(sandbox.url, sandbox.keys.premium);
});
afterAll(() => sandbox.close());
beforeEach(() => sandbox.reset());

const jobCount = () => sandbox.jobs.all.size;

describe('sandbox fault scenarios', () => {
	it('500 before acceptance creates nothing and charges nothing', async () => {
		const response = await http.generate({ prompt: 'p' }, { 'X-Sandbox-Scenario': 'error-500-before-accept' });
		expect(response.status).toBe(500);
		expect(response.body).toMatchObject({ error: { code: 'internal' } });
		expect(jobCount()).toBe(0);
	});

	it('500 after creation leaves a running, charged job behind', async () => {
		const response = await http.generate({ prompt: 'p [sandbox:error-500-after-create]' });
		expect(response.status).toBe(500);
		expect(jobCount()).toBe(1);
		expect(sandbox.accounts.accounts.get('acct_premium')?.reserved).toBe(80);
	});

	it('a timeout after acceptance holds the answer, then cuts the connection; the job exists', async () => {
		const started = Date.now();
		await expect(fetch(`${sandbox.url}/api/v1/generate`, {
			method: 'POST',
			headers: { Authorization: `Bearer ${sandbox.keys.premium}`, 'Content-Type': 'application/json', 'X-Sandbox-Scenario': 'timeout-after-accept' },
			body: JSON.stringify({ model: 'omni-video', prompt: 'p' }),
		})).rejects.toThrow();
		expect(Date.now() - started).toBeGreaterThanOrEqual(250);
		expect(jobCount()).toBe(1);
		expect(sandbox.journal.at(-1)).toMatchObject({ status: 'timeout' });
	});

	it('a reset after acceptance drops the connection at once; the job exists', async () => {
		await expect(fetch(`${sandbox.url}/api/v1/generate`, {
			method: 'POST',
			headers: { Authorization: `Bearer ${sandbox.keys.premium}`, 'Content-Type': 'application/json' },
			body: JSON.stringify({ model: 'omni-video', prompt: 'p [sandbox:reset-after-accept]' }),
		})).rejects.toThrow();
		expect(jobCount()).toBe(1);
		expect(sandbox.journal.at(-1)).toMatchObject({ status: 'reset' });
	});

	it('a 429 storm refuses the next requests of the key, then lets them through', async () => {
		const statuses: number[] = [];
		statuses.push((await http.job('job_x', undefined)).status);
		const first = await http.request('GET', '/api/v1/jobs/job_x', { headers: { 'X-Sandbox-Scenario': 'rate-limit-storm' } });
		statuses.push(first.status);
		for (let i = 0; i < 3; i++) statuses.push((await http.job('job_x')).status);
		expect(statuses).toEqual([404, 429, 429, 429, 404]);
		expect(first.headers['retry-after']).toBe('1');
	});

	it('a slow response arrives late but whole', async () => {
		const started = Date.now();
		const response = await http.request('GET', '/api/v1/jobs/job_x', { headers: { 'X-Sandbox-Scenario': 'slow-response' } });
		expect(response.status).toBe(404);
		expect(Date.now() - started).toBeGreaterThanOrEqual(250);
	});

	it('a malformed answer keeps its status; a create still creates', async () => {
		const response = await fetch(`${sandbox.url}/api/v1/generate`, {
			method: 'POST',
			headers: { Authorization: `Bearer ${sandbox.keys.premium}`, 'Content-Type': 'application/json', 'X-Sandbox-Scenario': 'malformed-json' },
			body: JSON.stringify({ model: 'omni-video', prompt: 'p' }),
		});
		expect(response.status).toBe(202);
		await expect(response.clone().json()).rejects.toThrow();
		expect(jobCount()).toBe(1);
	});

	it('service-unavailable answers 503 to any API request', async () => {
		const response = await http.request('GET', '/api/v1/jobs/job_x', { headers: { 'X-Sandbox-Scenario': 'service-unavailable' } });
		expect(response.status).toBe(503);
		expect(response.body).toMatchObject({ error: { code: 'unavailable' } });
	});

	it('applies scenarios configured on a key to all its requests', async () => {
		await fetch(`${sandbox.url}/__sandbox/keys`, {
			method: 'POST',
			headers: { 'Content-Type': 'application/json' },
			body: JSON.stringify({ key: 'omni_test_flaky', account: 'acct_premium', scenarios: ['service-unavailable'] }),
		});
		expect((await http.job('job_x', 'omni_test_flaky')).status).toBe(503);
	});

	it('serves a large output as a valid MP4 stream of the configured size', async () => {
		const small = await startSandbox({ port: 0, speed: 1_000, largeFileBytes: 3 * 1024 * 1024 });
		try {
			const client = new CheckedHttp(small.url, small.keys.premium);
			const created = await client.generate({ prompt: 'big [sandbox:large-output]', resolution: '720P', duration: 4 });
			small.clock.advance(60_000);
			const job = (await client.job((created.body as { id: string }).id)).body as { resultUrls: string[] };
			const video = await client.request('GET', job.resultUrls[0], { key: null });
			expect(video.bytes.length).toBe(3 * 1024 * 1024);
			expect(video.bytes.subarray(4, 8).toString('ascii')).toBe('ftyp');
			// The padding is one MP4 `free` box that runs to the end of the file.
			const sample = (await import('../../sandbox/cdn')).SAMPLE_MP4;
			expect(video.bytes.readUInt32BE(sample.length)).toBe(video.bytes.length - sample.length);
			expect(video.bytes.subarray(sample.length + 4, sample.length + 8).toString('ascii')).toBe('free');
		} finally {
			await small.close();
		}
	});

	it('lists every scenario with a description at /__sandbox/scenarios', async () => {
		const listed = await (await fetch(`${sandbox.url}/__sandbox/scenarios`)).json();
		expect(listed).toEqual(SCENARIOS);
	});
});

describe('sandbox admin API and CLI', () => {
	it('journals requests with the key label, never the key', async () => {
		await http.job('job_journal');
		const journal = (await (await fetch(`${sandbox.url}/__sandbox/requests`)).json()) as Array<Record<string, unknown>>;
		expect(journal.at(-1)).toMatchObject({ method: 'GET', path: '/api/v1/jobs/job_journal', status: 404, key: 'Premium' });
		expect(JSON.stringify(journal)).not.toContain(sandbox.keys.premium);
	});

	it('reports and moves the clock, finishing jobs on the way', async () => {
		const created = await http.generate({ prompt: 'p', resolution: '4K', duration: 10 });
		const clock = await (await fetch(`${sandbox.url}/__sandbox/clock`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ advanceMs: 91_000 }) })).json();
		expect(clock).toMatchObject({ speed: 1 });
		expect((await http.job((created.body as { id: string }).id)).body).toMatchObject({ status: 'done' });
		const jobs = (await (await fetch(`${sandbox.url}/__sandbox/jobs`)).json()) as Array<{ id: string; key: string }>;
		expect(jobs.map((j) => j.id)).toContain((created.body as { id: string }).id);
	});

	it('resets to a clean state', async () => {
		await http.generate({ prompt: 'p' });
		await fetch(`${sandbox.url}/__sandbox/reset`, { method: 'POST' });
		expect(sandbox.jobs.all.size).toBe(0);
		expect(sandbox.journal).toHaveLength(0);
	});

	it('starts from the command line and prints the URL, a key per plan and the secret', async () => {
		const child = spawn(process.execPath, ['node_modules/tsx/dist/cli.mjs', 'sandbox/cli.ts', '--port', '0', '--speed', '10'], {
			cwd: `${__dirname}/../..`,
		});
		try {
			const output = await new Promise<string>((resolve, reject) => {
				let text = '';
				child.stdout.on('data', (chunk: Buffer) => {
					text += chunk.toString();
					if (text.includes('Try:')) resolve(text);
				});
				child.on('exit', (code) => reject(new Error(`exited ${code}: ${text}`)));
			});
			const url = output.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/)?.[1];
			expect(url).toBeDefined();
			expect(output).toContain('omni_test_pro');
			expect(output).toContain('omni_test_premium');
			expect(output).toMatch(/whsec_/);
			expect(output).toContain('speed ×10');
			expect((await fetch(`${url}/__sandbox/clock`)).status).toBe(200);
		} finally {
			child.kill('SIGTERM');
		}
	});
});
