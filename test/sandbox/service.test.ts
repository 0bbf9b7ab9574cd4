/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-dangerous-functions -- test tooling, never shipped: runs the sandbox's command line */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { startSandbox, type Sandbox } from '../../sandbox';
import { resolveConfig } from '../../sandbox/config';
import { SERVICE_ENV, SERVICE_PROFILES, parseSwitch } from '../../sandbox/service';
import { CheckedHttp } from '../support/checkedHttp';
import { eventually, startReceiver } from '../support/receiver';

const TINY = {
	accounts: [{ id: 'acct_tiny', plan: { requestsPerMinute: 3, requestsPerHour: 100, concurrentJobs: 1 }, balance: 100_000 }],
	keys: [{ key: 'omni_test_tiny', account: 'acct_tiny' }],
};

const ROOT = `${__dirname}/../..`;
const created = (response: { body: unknown }) => (response.body as { id: string }).id;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('sandbox service profiles', () => {
	let sandbox: Sandbox | undefined;
	afterEach(async () => {
		await sandbox?.close();
		sandbox = undefined;
	});

	it('answers by docs/api.md unless told otherwise, and says which profile is active', async () => {
		sandbox = await startSandbox({ port: 0, service: 'default' });
		expect(sandbox.service).toEqual({ profile: 'default', switches: SERVICE_PROFILES.default });
		const admin = await fetch(`${sandbox.url}/__sandbox/service`).then((r) => r.json());
		expect(admin).toEqual({ profile: 'default', switches: SERVICE_PROFILES.default });
	});

	it('takes the strictest reading of every switch under service spec, and shows it', async () => {
		sandbox = await startSandbox({ port: 0, service: 'spec' });
		expect(SERVICE_PROFILES.spec).toEqual({
			idempotencyKeys: 'ignored',
			callbackSigning: 'unsigned',
			callbackDelivery: 'once',
			failedJobCallbacks: false,
			reportProgress: false,
			rateLimitHeaders: false,
			retryAfter: false,
			distinctLimitCodes: false,
		});
		const admin = await fetch(`${sandbox.url}/__sandbox/service`).then((r) => r.json());
		expect(admin).toEqual({ profile: 'spec', switches: SERVICE_PROFILES.spec });
	});

	it('lets any switch be set over the profile, explicitly or from a config file, and reads OMNI_SANDBOX_SERVICE', () => {
		expect(resolveConfig({ service: 'spec', idempotencyKeys: 'replayed' })).toMatchObject({ ...SERVICE_PROFILES.spec, service: 'spec', idempotencyKeys: 'replayed' });
		expect(resolveConfig({ service: 'default', callbackDelivery: 'never' })).toMatchObject({ ...SERVICE_PROFILES.default, callbackDelivery: 'never' });
		// --no-progress keeps its old meaning on the default profile.
		expect(resolveConfig({ service: 'default', reportProgress: false })).toMatchObject({ reportProgress: false, rateLimitHeaders: true });
		const before = process.env[SERVICE_ENV];
		try {
			process.env[SERVICE_ENV] = 'spec';
			expect(resolveConfig({})).toMatchObject({ service: 'spec', ...SERVICE_PROFILES.spec });
			// An explicit profile wins over the environment.
			expect(resolveConfig({ service: 'default' }).service).toBe('default');
			process.env[SERVICE_ENV] = 'strict';
			expect(() => resolveConfig({})).toThrow(/OMNI_SANDBOX_SERVICE: unknown service profile "strict" \(choose default or spec\)/);
		} finally {
			if (before === undefined) delete process.env[SERVICE_ENV];
			else process.env[SERVICE_ENV] = before;
		}
		expect(parseSwitch('failedJobCallbacks=false')).toEqual({ failedJobCallbacks: false });
		expect(() => parseSwitch('callbackDelivery=twice')).toThrow(/callbackDelivery takes retried or once or never/);
		expect(() => parseSwitch('signed')).toThrow(/NAME=VALUE/);
	});

	describe('idempotencyKeys', () => {
		it('replayed: the same key and body get the first job back', async () => {
			sandbox = await startSandbox({ port: 0, service: 'default' });
			const http = new CheckedHttp(sandbox.url, sandbox.keys.pro);
			const first = await http.generate({ prompt: 'a fox' }, { 'Idempotency-Key': 'k-1' });
			const again = await http.generate({ prompt: 'a fox' }, { 'Idempotency-Key': 'k-1' });
			expect(created(again)).toBe(created(first));
			expect(again.headers['idempotent-replayed']).toBe('true');
			expect(sandbox.jobs.all.size).toBe(1);
		});

		it('ignored: every create is a new, paid job, whatever its key', async () => {
			sandbox = await startSandbox({ port: 0, service: 'spec' });
			const http = new CheckedHttp(sandbox.url, sandbox.keys.pro);
			const first = await http.generate({ prompt: 'a fox' }, { 'Idempotency-Key': 'k-1' });
			const again = await http.generate({ prompt: 'a fox' }, { 'Idempotency-Key': 'k-1' });
			const otherBody = await http.generate({ prompt: 'a cat' }, { 'Idempotency-Key': 'k-1' });
			expect([first.status, again.status, otherBody.status]).toEqual([202, 202, 202]);
			expect(new Set([created(first), created(again), created(otherBody)]).size).toBe(3);
			expect(again.headers['idempotent-replayed']).toBeUndefined();
			// The journal still shows the key each request carried.
			expect(sandbox.journal.filter((entry) => entry.idempotencyKey === 'k-1')).toHaveLength(3);
		});

		it('ignored: a create answered 500 after the job was made makes a second job when sent again', async () => {
			sandbox = await startSandbox({ port: 0, service: 'spec' });
			const http = new CheckedHttp(sandbox.url, sandbox.keys.pro);
			const lost = await http.generate({ prompt: 'a fox' }, { 'Idempotency-Key': 'k-2', 'X-Sandbox-Scenario': 'error-500-after-create' });
			expect(lost.status).toBe(500);
			const resent = await http.generate({ prompt: 'a fox' }, { 'Idempotency-Key': 'k-2' });
			expect(resent.status).toBe(202);
			expect(sandbox.jobs.all.size).toBe(2);
		});
	});

	describe('callbacks', () => {
		it('signed (default): Standard Webhooks headers; unsigned: none of them', async () => {
			const receiver = await startReceiver([200]);
			try {
				sandbox = await startSandbox({ port: 0, speed: 2_000, insecureCallbacks: true, service: 'default' });
				await new CheckedHttp(sandbox.url, sandbox.keys.pro).generate({ prompt: 'signed', callbackUrl: receiver.url });
				const [signed] = await receiver.waitFor(1);
				expect(signed.headers).toHaveProperty('webhook-signature');
				await sandbox.close();
				sandbox = await startSandbox({ port: 0, speed: 2_000, insecureCallbacks: true, service: 'spec' });
				await new CheckedHttp(sandbox.url, sandbox.keys.pro).generate({ prompt: 'unsigned', callbackUrl: receiver.url });
				const [, unsigned] = await receiver.waitFor(2);
				expect(JSON.parse(unsigned.body)).toMatchObject({ status: 'done' });
				for (const header of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) expect(unsigned.headers).not.toHaveProperty(header);
			} finally {
				await receiver.close();
			}
		});

		it('once: a refused delivery is not tried again', async () => {
			const receiver = await startReceiver([503, 200]);
			try {
				sandbox = await startSandbox({ port: 0, speed: 20_000, insecureCallbacks: true, service: 'spec' });
				await new CheckedHttp(sandbox.url, sandbox.keys.pro).generate({ prompt: 'once', callbackUrl: receiver.url });
				await receiver.waitFor(1);
				const attempts = await eventually(() => (sandbox?.callbackAttempts[0]?.status ? sandbox.callbackAttempts : undefined));
				expect(attempts.map((a) => [a.attempt, a.status, a.outcome])).toEqual([[1, 503, 'gave-up']]);
				// At ×20 000 the default schedule's second attempt (5 s) would come within a millisecond.
				sandbox.clock.advance(3 * 3_600_000);
				await pause(200);
				expect(receiver.received).toHaveLength(1);
			} finally {
				await receiver.close();
			}
		});

		it('retried (default): the same refusal is tried again', async () => {
			const receiver = await startReceiver([503, 200]);
			try {
				sandbox = await startSandbox({ port: 0, speed: 20_000, insecureCallbacks: true, service: 'default' });
				await new CheckedHttp(sandbox.url, sandbox.keys.pro).generate({ prompt: 'retried', callbackUrl: receiver.url });
				await receiver.waitFor(2);
			} finally {
				await receiver.close();
			}
		});

		it('never: no callback is sent, though the job ends', async () => {
			const receiver = await startReceiver([200]);
			try {
				sandbox = await startSandbox({ port: 0, speed: 2_000, insecureCallbacks: true, service: 'default', callbackDelivery: 'never' });
				const http = new CheckedHttp(sandbox.url, sandbox.keys.pro);
				const job = await http.generate({ prompt: 'never', callbackUrl: receiver.url });
				await eventually(async () => ((await http.job(created(job))).body as { status: string }).status === 'done' || undefined, 10_000);
				await pause(200);
				expect(receiver.received).toHaveLength(0);
				expect(sandbox.callbackAttempts).toHaveLength(0);
			} finally {
				await receiver.close();
			}
		});

		it('failedJobCallbacks: false sends a done job its callback and a failed one none', async () => {
			const receiver = await startReceiver([200]);
			try {
				sandbox = await startSandbox({ port: 0, speed: 2_000, insecureCallbacks: true, service: 'spec' });
				const http = new CheckedHttp(sandbox.url, sandbox.keys.premium);
				const failed = await http.generate({ prompt: 'no [sandbox:job-fails-content-policy]', callbackUrl: receiver.url });
				const done = await http.generate({ prompt: 'ok', callbackUrl: receiver.url });
				const [delivery] = await receiver.waitFor(1);
				expect(JSON.parse(delivery.body)).toMatchObject({ id: created(done), status: 'done' });
				await eventually(async () => ((await http.job(created(failed))).body as { status: string }).status === 'failed' || undefined, 10_000);
				await pause(200);
				expect(receiver.received).toHaveLength(1);
			} finally {
				await receiver.close();
			}
		});
	});

	it('reportProgress: false under spec, running records carry no progress', async () => {
		sandbox = await startSandbox({ port: 0, speed: 0, clientClock: 'sandbox', service: 'spec', renderTimes: { seed: 1, spread: 0 } });
		const http = new CheckedHttp(sandbox.url, sandbox.keys.pro);
		const job = await http.generate({ prompt: 'no progress' });
		sandbox.clock.advance(20_000);
		const record = (await http.job(created(job))).body as Record<string, unknown>;
		expect(record.status).toBe('processing');
		expect(record).not.toHaveProperty('progress');
	});

	describe('429s and rate-limit headers', () => {
		it('default: X-RateLimit-* on every answer; 429 says which limit, with Retry-After', async () => {
			sandbox = await startSandbox({ port: 0, speed: 1, service: 'default', ...TINY });
			const http = new CheckedHttp(sandbox.url, 'omni_test_tiny');
			const first = await http.generate({ prompt: 'one' });
			expect(first.headers['x-ratelimit-limit']).toBe('3');
			const concurrency = await http.generate({ prompt: 'two' });
			expect(concurrency.status).toBe(429);
			expect(concurrency.body).toMatchObject({ error: { code: 'concurrency_limited' } });
			expect(concurrency.headers['retry-after']).toMatch(/^\d+$/);
			await http.job(created(first));
			const window = await http.job(created(first));
			expect(window.status).toBe(429);
			expect(window.body).toMatchObject({ error: { code: 'rate_limited' } });
			expect(window.headers['retry-after']).toMatch(/^\d+$/);
		});

		it('spec: no X-RateLimit-*, and both 429s alike, without Retry-After', async () => {
			sandbox = await startSandbox({ port: 0, speed: 1, service: 'spec', ...TINY });
			const http = new CheckedHttp(sandbox.url, 'omni_test_tiny', sandbox.service.switches);
			const first = await http.generate({ prompt: 'one' });
			expect(first.status).toBe(202);
			const concurrency = await http.generate({ prompt: 'two' });
			await http.job(created(first));
			const window = await http.job(created(first));
			for (const answer of [first, concurrency, window]) {
				for (const header of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after']) expect(answer.headers).not.toHaveProperty(header);
			}
			for (const refused of [concurrency, window]) {
				expect(refused.status).toBe(429);
				expect(refused.body).toMatchObject({ error: { code: 'too_many_requests', message: 'Too many requests.' } });
			}
		});

		it('each part can be turned alone: Retry-After kept while the codes are merged', async () => {
			sandbox = await startSandbox({ port: 0, speed: 1, service: 'spec', retryAfter: true, ...TINY });
			const http = new CheckedHttp(sandbox.url, 'omni_test_tiny');
			await http.generate({ prompt: 'one' });
			const concurrency = await http.generate({ prompt: 'two' });
			expect(concurrency.body).toMatchObject({ error: { code: 'too_many_requests' } });
			expect(concurrency.headers['retry-after']).toMatch(/^\d+$/);
		});
	});

	it('the command line takes --service and --switch and prints the reading it answers by', async () => {
		const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'sandbox/cli.ts', '--help'], { cwd: ROOT });
		expect(stdout).toMatch(/--service NAME/);
		const child = spawn(process.execPath, ['--import', 'tsx', 'sandbox/cli.ts', '--port', '0', '--service', 'spec', '--switch', 'idempotencyKeys=replayed'], { cwd: ROOT });
		try {
			let out = '';
			child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
			const banner = await eventually(() => (out.includes('Try:') ? out : undefined), 30_000);
			expect(banner).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+ {2}\(service spec \(idempotencyKeys=replayed\), speed/);
			const url = /listening on (\S+)/.exec(banner)?.[1];
			const admin = await fetch(`${url}/__sandbox/service`).then((r) => r.json());
			expect(admin).toEqual({ profile: 'spec', switches: { ...SERVICE_PROFILES.spec, idempotencyKeys: 'replayed' } });
		} finally {
			// One process (node with tsx's loader), so its own pid is all there is to stop.
			child.kill('SIGTERM');
		}
	}, 60_000);
});
