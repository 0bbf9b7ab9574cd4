/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test tooling, never shipped */
import { startSandbox, type Sandbox } from '../../sandbox';
import { standardWebhookSignature } from '../../sandbox/signing';
import type { CallbackAttempt } from '../../sandbox/callbacks';
import { verifyWebhookSignature } from '../../core/callbacks/signature';
import { CheckedHttp } from '../support/checkedHttp';
import { startReceiver, eventually } from '../support/receiver';
import { validatorFor } from '../../sandbox/openapi';
import vector from '../fixtures/webhook-test-vector.json';

let sandbox: Sandbox;
let http: CheckedHttp;

beforeAll(async () => {
	sandbox = await startSandbox({ port: 0, speed: 2_000, insecureCallbacks: true });
	http = new CheckedHttp(sandbox.url, sandbox.keys.premium);
});
afterAll(() => sandbox.close());
beforeEach(() => sandbox.reset());

/**
 * The sandbox's first `count` delivery attempts, once each has its answer. An attempt is on record
 * from when it is sent, and a receiver has the request before the sandbox reads the answer (later
 * on a loaded machine): reading the record when the receiver got the request races that.
 */
const answeredAttempts = (count: number): Promise<CallbackAttempt[]> =>
	eventually(() => {
		const attempts = sandbox.callbackAttempts;
		const answered = attempts.length >= count && attempts.slice(0, count).every((attempt) => attempt.status !== undefined || attempt.error !== undefined);
		return answered ? attempts.slice(0, count) : undefined;
	});

describe('sandbox callbacks', () => {
	it('signs with the contract test vector', () => {
		expect(standardWebhookSignature(vector.secret, vector.id, vector.timestamp, vector.body)).toBe(vector.signature);
	});

	it('delivers done and failed jobs once each, signed, with the job record as body', async () => {
		const receiver = await startReceiver([200]);
		try {
			const done = await http.generate({ prompt: 'ok', callbackUrl: receiver.url });
			const failed = await http.generate({ prompt: 'no [sandbox:job-fails-content-policy]', callbackUrl: receiver.url });
			const deliveries = await receiver.waitFor(2);
			const bodies = deliveries.map((d) => JSON.parse(d.body) as { id: string; status: string });
			expect(bodies.map((b) => b.id).sort()).toEqual([(done.body as { id: string }).id, (failed.body as { id: string }).id].sort());
			expect(bodies.map((b) => b.status).sort()).toEqual(['done', 'failed']);
			for (const delivery of deliveries) {
				expect(delivery.headers['content-type']).toBe('application/json');
				expect(validatorFor('#/components/schemas/Job')(JSON.parse(delivery.body))).toBe(true);
				const check = verifyWebhookSignature({ secret: sandbox.webhookSecret, headers: delivery.headers, rawBody: delivery.body, nowMs: Date.now() });
				expect(check).toMatchObject({ ok: true });
				// The body is the job record exactly as a lookup shows it.
				const lookup = await http.job(JSON.parse(delivery.body).id);
				expect(JSON.parse(delivery.body)).toEqual(lookup.body);
			}
			await new Promise((resolve) => setTimeout(resolve, 300));
			expect(receiver.received).toHaveLength(2);
		} finally {
			await receiver.close();
		}
	});

	it('retries failed deliveries on the schedule with a stable webhook-id and a fresh signature', async () => {
		const receiver = await startReceiver([500, 302, 200]);
		try {
			await http.generate({ prompt: 'retry me', callbackUrl: receiver.url });
			const deliveries = await receiver.waitFor(3, 15_000);
			expect(new Set(deliveries.map((d) => d.headers['webhook-id'])).size).toBe(1);
			const attempts = await answeredAttempts(3);
			expect(attempts.map((a) => [a.attempt, a.status, a.outcome])).toEqual([
				[1, 500, 'retrying'],
				[2, 302, 'retrying'],
				[3, 200, 'delivered'],
			]);
			// 5 s then 5 min apart in virtual time.
			const times = attempts.map((a) => Date.parse(a.at));
			expect(times[1] - times[0]).toBeGreaterThanOrEqual(5_000);
			expect(times[2] - times[1]).toBeGreaterThanOrEqual(300_000);
		} finally {
			await receiver.close();
		}
	});

	it('stops retrying on 410 Gone', async () => {
		const receiver = await startReceiver([410]);
		try {
			await http.generate({ prompt: 'gone', callbackUrl: receiver.url });
			const [attempt] = await answeredAttempts(1);
			expect(attempt).toMatchObject({ status: 410, outcome: 'stopped-by-410' });
			// Moved on only once the sandbox has read the 410: a retry it scheduled would fall due now.
			sandbox.clock.advance(48 * 3_600_000);
			await new Promise((resolve) => setTimeout(resolve, 200));
			expect(receiver.received).toHaveLength(1);
		} finally {
			await receiver.close();
		}
	});

	it('gives up after the last retry of the schedule', async () => {
		const receiver = await startReceiver([503]);
		try {
			await http.generate({ prompt: 'never', callbackUrl: receiver.url });
			await receiver.waitFor(1);
			for (let i = 0; i < 8; i++) {
				sandbox.clock.advance(11 * 3_600_000);
				await eventually(() => (receiver.received.length >= Math.min(i + 2, 8) ? true : undefined));
			}
			expect(receiver.received).toHaveLength(8);
			expect((await answeredAttempts(8)).at(-1)).toMatchObject({ attempt: 8, outcome: 'gave-up' });
		} finally {
			await receiver.close();
		}
	});

	it('delivers duplicates with the same webhook-id (callback-duplicate)', async () => {
		const receiver = await startReceiver([200]);
		try {
			await http.generate({ prompt: 'twice [sandbox:callback-duplicate]', callbackUrl: receiver.url });
			const deliveries = await receiver.waitFor(2);
			expect(deliveries[0].headers['webhook-id']).toBe(deliveries[1].headers['webhook-id']);
			expect(deliveries[0].body).toBe(deliveries[1].body);
		} finally {
			await receiver.close();
		}
	});

	it('delivers a held-back callback after a later job’s (callback-out-of-order)', async () => {
		// Its own sandbox at 100×: the later job's callback leads the held-back one by at least 60
		// virtual seconds (renders 30–90 s, held back 120 s), 30 ms at the suite's 2,000×: less than a
		// loaded machine once took between the two creates (CI, 2026-12-05). 0.6 s here.
		const slower = await startSandbox({ port: 0, speed: 100, insecureCallbacks: true });
		const http = new CheckedHttp(slower.url, slower.keys.premium);
		const receiver = await startReceiver([200]);
		try {
			const first = await http.generate({ prompt: 'first [sandbox:callback-out-of-order]', resolution: '720P', duration: 4, callbackUrl: receiver.url });
			const second = await http.generate({ prompt: 'second', resolution: '4K', duration: 10, callbackUrl: receiver.url });
			const deliveries = await receiver.waitFor(2);
			expect(deliveries.map((d) => JSON.parse(d.body).id)).toEqual([(second.body as { id: string }).id, (first.body as { id: string }).id]);
		} finally {
			await receiver.close();
			await slower.close();
		}
	});
});
