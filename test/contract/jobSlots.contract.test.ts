import { startSandbox, type Sandbox } from '../../sandbox';
import { createOmniVideoClient, type OmniVideoClient } from '../../core/client';
import { createAxiosTransport } from '../../node-host/axiosTransport';
import { realSleep } from '../../node-host/runtime';
import type { PlanLimits } from '../../core/types';

const SPEED = 25;
const ONE_AT_A_TIME: PlanLimits = { requestsPerMinute: 60, requestsPerHour: 1_000, concurrentJobs: 1 };

let sandbox: Sandbox;

/** A client on the sandbox's clock (virtual time), so that the slot's hold is measured as the service sees it. */
function clientOnSandboxClock(): OmniVideoClient {
	return createOmniVideoClient({
		baseUrl: sandbox.url,
		transport: createAxiosTransport({ baseUrl: sandbox.url, apiKey: 'omni_test_one' }),
		clock: { now: () => sandbox.clock.now() },
		sleep: (ms, signal) => realSleep(ms / SPEED, signal),
		random: Math.random,
		limits: ONE_AT_A_TIME,
		limiterKey: `slots-${Math.random()}`,
	});
}

beforeEach(async () => {
	sandbox = await startSandbox({
		port: 0,
		speed: SPEED,
		clientClock: 'sandbox',
		renderTimes: { seed: 1, spread: 0 },
		accounts: [{ id: 'acct_one', plan: ONE_AT_A_TIME, balance: 100_000 }],
		keys: [{ key: 'omni_test_one', account: 'acct_one' }],
	});
});
afterEach(() => sandbox.close());

describe('job slots held by jobs nobody here watches', () => {
	it('looks an overdue Don\'t Wait job up instead of waiting out its whole hold before the next create', async () => {
		const client = clientOnSandboxClock();
		const first = await client.generateVideo({ prompt: 'first', resolution: '720P', duration: 4 });
		const second = await client.generateVideo({ prompt: 'second', resolution: '720P', duration: 4 });

		const firstJob = sandbox.jobs.all.get(first.job.id);
		const creates = sandbox.journal.filter((entry) => entry.path === '/api/v1/generate' && entry.status === 202);
		const lookups = sandbox.journal.filter((entry) => entry.path === `/api/v1/jobs/${first.job.id}`);
		expect(creates).toHaveLength(2);
		expect(second.job.id).not.toBe(first.job.id);
		// Without the lookup the second create waits for the first job's hold: 95 s after its create.
		// With it, the second create follows the first job's end within one lookup interval (10 s, and a margin for a busy machine).
		const secondCreatedAt = Date.parse(creates[1].at);
		expect(firstJob).toBeDefined();
		expect(secondCreatedAt).toBeGreaterThanOrEqual(firstJob!.endsAt);
		expect(secondCreatedAt - firstJob!.endsAt).toBeLessThan(20_000);
		expect(secondCreatedAt - firstJob!.createdAt).toBeLessThan(70_000);
		expect(lookups.length).toBeGreaterThanOrEqual(1);
		expect(lookups.length).toBeLessThanOrEqual(2);
		expect(sandbox.journal.filter((entry) => entry.status === 429)).toHaveLength(0);
	});

	it('spends no lookup on a job this process watches: it waits for the job to be seen ended', async () => {
		const client = clientOnSandboxClock();
		const first = await client.generateVideo({ prompt: 'watched', resolution: '720P', duration: 4 }, { watched: true });
		const waiting = client.generateVideo({ prompt: 'next', resolution: '720P', duration: 4 });
		const done = await client.waitForJob(first.job.id, { expectedMs: first.expectedMs });
		await waiting;
		const lookups = sandbox.journal.filter((entry) => entry.path === `/api/v1/jobs/${first.job.id}`);
		expect(done.status).toBe('done');
		// Only the waiter's own looks: the create waiting for the slot adds none.
		expect(lookups.length).toBeLessThanOrEqual(2);
		expect(sandbox.journal.filter((entry) => entry.status === 429)).toHaveLength(0);
	});
});
