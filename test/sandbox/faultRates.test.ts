/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test tooling, never shipped */
import { startSandbox, type Sandbox, type SandboxOptions } from '../../sandbox';
import { FaultRates, type FaultKind } from '../../sandbox/faultRates';
import { CheckedHttp } from '../support/checkedHttp';
import { eventually, startReceiver } from '../support/receiver';

const ROOMY = { requestsPerMinute: 100_000, requestsPerHour: 1_000_000, concurrentJobs: 1_000 };

/** A sandbox with one key, `omni_test_faults`, on an account of these limits. */
const sandboxWith = (options: SandboxOptions, limits = ROOMY) =>
	startSandbox({
		port: 0,
		speed: 2_000,
		insecureCallbacks: true,
		renderTimes: { seed: 1, spread: 0 },
		accounts: [{ id: 'acct_faults', plan: limits, balance: 10_000_000 }],
		keys: [{ key: 'omni_test_faults', account: 'acct_faults', label: 'faults' }],
		...options,
	});

const draws = (faults: FaultRates, kind: FaultKind, count: number) => Array.from({ length: count }, () => faults.fails(kind));

const admin = async (sandbox: Sandbox, method: 'GET' | 'POST', body?: unknown) => {
	const response = await fetch(`${sandbox.url}/__sandbox/faults`, { method, body: body === undefined ? undefined : JSON.stringify(body) });
	return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

describe('FaultRates', () => {
	it('fails about the rate, the same draws for the same seed', () => {
		const first = draws(new FaultRates({ unavailable: 0.5, seed: 42 }), 'unavailable', 200);
		const failed = first.filter(Boolean).length;
		expect(failed).toBeGreaterThan(70);
		expect(failed).toBeLessThan(130);
		expect(draws(new FaultRates({ unavailable: 0.5, seed: 42 }), 'unavailable', 200)).toEqual(first);
		expect(draws(new FaultRates({ unavailable: 0.5, seed: 43 }), 'unavailable', 200)).not.toEqual(first);
	});

	it('never fails at 0, always at 1', () => {
		const faults = new FaultRates({ lostCallbacks: 1, unavailable: 0, seed: 7 });
		expect(draws(faults, 'lostCallbacks', 500).every(Boolean)).toBe(true);
		expect(draws(faults, 'unavailable', 500).some(Boolean)).toBe(false);
	});

	it('keeps each kind to its own stream, and reset starts both over', () => {
		const faults = new FaultRates({ lostCallbacks: 0.5, unavailable: 0.5, seed: 9 });
		const alone = draws(new FaultRates({ unavailable: 0.5, seed: 9 }), 'unavailable', 50);
		draws(faults, 'lostCallbacks', 30);
		expect(draws(faults, 'unavailable', 50)).toEqual(alone);
		faults.set({ unavailable: 1, seed: 100 });
		faults.reset();
		expect(faults.current).toEqual({ lostCallbacks: 0.5, unavailable: 0.5, seed: 9 });
		expect(draws(faults, 'unavailable', 50)).toEqual(alone);
	});

	it('refuses rates outside 0..1', () => {
		expect(() => new FaultRates({ unavailable: 1.5 })).toThrow('unavailable must be a fraction from 0 to 1');
		expect(() => new FaultRates({ lostCallbacks: -0.1 })).toThrow('lostCallbacks must be a fraction from 0 to 1');
	});
});

describe('sandbox unavailable rate', () => {
	let sandbox: Sandbox | undefined;
	afterEach(async () => {
		await sandbox?.close();
		sandbox = undefined;
	});

	it('answers about the rate of API requests 503, journaled, the same ones for the same seed', async () => {
		sandbox = await sandboxWith({ faultRates: { unavailable: 0.5, seed: 5 } });
		const http = new CheckedHttp(sandbox.url, 'omni_test_faults');
		const statuses = async () => {
			const seen: number[] = [];
			for (let i = 0; i < 200; i++) seen.push((await http.job('job_missing')).status);
			return seen;
		};
		const first = await statuses();
		const unavailable = first.filter((status) => status === 503).length;
		expect(unavailable).toBeGreaterThan(70);
		expect(unavailable).toBeLessThan(130);
		expect(first.filter((status) => status !== 503 && status !== 404)).toEqual([]);
		expect(sandbox.journal.map((entry) => entry.status)).toEqual(first);
		const refused = http.seen.find((response) => response.status === 503);
		expect(refused?.headers['retry-after']).toBe('1');
		expect(refused?.body).toMatchObject({ error: { code: 'unavailable' } });

		sandbox.reset();
		expect(await statuses()).toEqual(first);
	});

	it('costs the caller no request of its window', async () => {
		sandbox = await sandboxWith({ speed: 1, faultRates: { unavailable: 1 } }, { requestsPerMinute: 2, requestsPerHour: 100, concurrentJobs: 1 });
		const http = new CheckedHttp(sandbox.url, 'omni_test_faults');
		for (let i = 0; i < 5; i++) expect((await http.job('job_missing')).status).toBe(503);
		expect((await admin(sandbox, 'POST', { unavailable: 0 })).body).toMatchObject({ unavailable: 0 });
		const first = await http.job('job_missing');
		expect([first.status, first.headers['x-ratelimit-remaining']]).toEqual([404, '1']);
		expect((await http.job('job_missing')).status).toBe(404);
		expect((await http.job('job_missing')).status).toBe(429);
	});
});

describe('sandbox lost callbacks rate', () => {
	let sandbox: Sandbox | undefined;
	afterEach(async () => {
		await sandbox?.close();
		sandbox = undefined;
	});

	it('sends nothing for a lost delivery and records one lost attempt', async () => {
		const receiver = await startReceiver([200]);
		try {
			sandbox = await sandboxWith({ faultRates: { lostCallbacks: 1 } });
			const http = new CheckedHttp(sandbox.url, 'omni_test_faults');
			const created = await http.generate({ prompt: 'lost', resolution: '720P', duration: 4, callbackUrl: receiver.url });
			const jobId = (created.body as { id: string }).id;
			const [attempt] = await eventually(() => (sandbox?.callbackAttempts.length ? sandbox.callbackAttempts : undefined));
			expect(attempt).toMatchObject({ jobId, url: receiver.url, attempt: 1, outcome: 'lost' });
			expect(attempt.status).toBeUndefined();
			// 400 ms real is over 13 virtual minutes: past the first two retries of a refused delivery.
			await new Promise((resolve) => setTimeout(resolve, 400));
			expect(receiver.received).toHaveLength(0);
			expect(sandbox.callbackAttempts).toHaveLength(1);
		} finally {
			await receiver.close();
		}
	});

	it('loses about the rate of deliveries, as many for the same seed', async () => {
		const receiver = await startReceiver([200]);
		try {
			const jobs = 200;
			sandbox = await sandboxWith({ faultRates: { lostCallbacks: 0.5, seed: 11 } });
			const http = new CheckedHttp(sandbox.url, 'omni_test_faults');
			const run = async (current: Sandbox) => {
				const ids = new Set<string>();
				for (let i = 0; i < jobs; i++) {
					const created = await http.generate({ prompt: `soak ${i}`, resolution: '720P', duration: 4, callbackUrl: receiver.url });
					ids.add((created.body as { id: string }).id);
				}
				const ended = () => current.callbackAttempts.filter((attempt) => attempt.outcome === 'lost' || attempt.outcome === 'delivered');
				const attempts = await eventually(() => (ended().length === jobs ? ended() : undefined));
				expect(new Set(attempts.map((attempt) => attempt.jobId))).toEqual(ids);
				const lost = new Set(attempts.filter((attempt) => attempt.outcome === 'lost').map((attempt) => attempt.jobId));
				const delivered = receiver.received.map((delivery) => (JSON.parse(delivery.body) as { id: string }).id);
				expect(delivered).toHaveLength(jobs - lost.size);
				expect(delivered.filter((id) => lost.has(id))).toEqual([]);
				return lost.size;
			};
			const lost = await run(sandbox);
			expect(lost).toBeGreaterThan(70);
			expect(lost).toBeLessThan(130);
			// The same draws, whichever job each falls to: the count is the seed's.
			expect(lost).toBe(draws(new FaultRates({ lostCallbacks: 0.5, seed: 11 }), 'lostCallbacks', jobs).filter(Boolean).length);

			sandbox.reset();
			receiver.received.length = 0;
			expect(await run(sandbox)).toBe(lost);
		} finally {
			await receiver.close();
		}
	});
});

describe('sandbox fault rates admin route', () => {
	let sandbox: Sandbox | undefined;
	afterEach(async () => {
		await sandbox?.close();
		sandbox = undefined;
	});

	it('reads and changes the rates, refusing values outside 0..1', async () => {
		sandbox = await sandboxWith({});
		expect(await admin(sandbox, 'GET')).toEqual({ status: 200, body: { lostCallbacks: 0, unavailable: 0, seed: 1 } });
		expect(await admin(sandbox, 'POST', { lostCallbacks: 0.05, unavailable: 0.01 })).toEqual({
			status: 200,
			body: { lostCallbacks: 0.05, unavailable: 0.01, seed: 1 },
		});
		expect(await admin(sandbox, 'POST', { seed: 3 })).toEqual({ status: 200, body: { lostCallbacks: 0.05, unavailable: 0.01, seed: 3 } });

		const refused = await admin(sandbox, 'POST', { lostCallbacks: 1.5, unavailable: 0.5 });
		expect(refused.status).toBe(400);
		expect(refused.body).toMatchObject({ error: { code: 'invalid_request', message: 'lostCallbacks must be a fraction from 0 to 1 (0.05 is 5 %), not 1.5.' } });
		expect((await admin(sandbox, 'POST', { unavailable: '0.5' })).status).toBe(400);
		expect((await admin(sandbox, 'POST', { lostCallback: 0.5 })).body).toMatchObject({ error: { message: expect.stringContaining('Unknown fault rate lostCallback') } });
		expect((await admin(sandbox, 'GET')).body).toEqual({ lostCallbacks: 0.05, unavailable: 0.01, seed: 3 });
	});

	it('refuses a config whose rate is outside 0..1', async () => {
		await expect(sandboxWith({ faultRates: { unavailable: 2 } })).rejects.toThrow('unavailable must be a fraction from 0 to 1');
	});
});
