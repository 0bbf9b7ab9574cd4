/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test tooling, never shipped */
import { startSandbox, type Sandbox } from '../../sandbox';
import { CheckedHttp } from '../support/checkedHttp';
import { startReceiver } from '../support/receiver';

/** Clients that run on the sandbox's clock (the bench) must wait and verify in virtual time. */
describe.each([
	['real', 1],
	['sandbox', 100],
] as const)('sandbox with clientClock %s, sped up 100×', (clientClock, retryAfterFactor) => {
	let sandbox: Sandbox;
	beforeEach(async () => {
		sandbox = await startSandbox({
			port: 0,
			speed: 100,
			insecureCallbacks: true,
			clientClock,
			accounts: [{ id: 'acct_tiny', plan: { requestsPerMinute: 100, requestsPerHour: 1, concurrentJobs: 1 }, balance: 100_000 }],
			keys: [{ key: 'omni_test_tiny', account: 'acct_tiny' }],
		});
	});
	afterEach(() => sandbox.close());

	it(`gives Retry-After in ${clientClock} seconds`, async () => {
		const http = new CheckedHttp(sandbox.url, 'omni_test_tiny');
		expect((await http.job('job_x')).status).toBe(404);
		const refused = await http.job('job_x');
		expect(refused.status).toBe(429);
		// An hour window: 3600 virtual seconds, 36 real ones at 100×.
		const seconds = Number(refused.headers['retry-after']);
		expect(seconds).toBeGreaterThanOrEqual(35 * retryAfterFactor);
		expect(seconds).toBeLessThanOrEqual(36 * retryAfterFactor);
	});

	it(`signs callbacks with ${clientClock} timestamps`, async () => {
		const receiver = await startReceiver([200]);
		try {
			const http = new CheckedHttp(sandbox.url, 'omni_test_tiny');
			expect((await http.generate({ prompt: 'clock', resolution: '720P', duration: 4, callbackUrl: receiver.url })).status).toBe(202);
			sandbox.clock.advance(120_000);
			const [delivery] = await receiver.waitFor(1);
			// Sent when the job ended: on the sandbox's clock, that is at its endsAt, 30 to 90 s
			// (virtual) after the create and about 120 s ahead of real time after the jump.
			const [job] = sandbox.jobs.all.values();
			const expected = clientClock === 'sandbox' ? job.endsAt : delivery.at;
			expect(Math.abs(Number(delivery.headers['webhook-timestamp']) * 1000 - expected)).toBeLessThan(2_000);
		} finally {
			await receiver.close();
		}
	});
});

describe('sandbox clock standing still (speed 0)', () => {
	it('moves only when advanced, running the jobs and callbacks due on the way', async () => {
		const receiver = await startReceiver([200]);
		const sandbox = await startSandbox({ port: 0, speed: 0, insecureCallbacks: true, clientClock: 'sandbox', renderTimes: { seed: 1, spread: 0 } });
		try {
			const http = new CheckedHttp(sandbox.url, sandbox.keys.pro);
			const start = sandbox.clock.now();
			const created = await http.generate({ prompt: 'still', resolution: '720P', duration: 4, callbackUrl: receiver.url });
			const id = (created.body as { id: string }).id;
			await new Promise((resolve) => setTimeout(resolve, 50));
			expect(sandbox.clock.now()).toBe(start);
			const endsAt = sandbox.clock.nextAt();
			expect(endsAt).toBe(sandbox.jobs.all.get(id)?.endsAt);
			expect((await http.job(id)).body).toMatchObject({ status: 'queued' });
			sandbox.clock.advance((endsAt ?? 0) - start);
			expect((await http.job(id)).body).toMatchObject({ status: 'done' });
			// The first delivery is due at the job's end: the next advance (even of nothing) sends it.
			sandbox.clock.advance(0);
			const [delivery] = await receiver.waitFor(1);
			expect(Number(delivery.headers['webhook-timestamp']) * 1000).toBe(Math.floor((endsAt ?? 0) / 1000) * 1000);
		} finally {
			await sandbox.close();
			await receiver.close();
		}
	});
});
