/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test tooling, never shipped */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSandbox, type Sandbox } from '../../sandbox';
import { PLANS, type PlanLimits } from '../../core/types';
import {
	AuthError,
	CreditsError,
	JobFailedError,
	NotFoundError,
	ServiceError,
	TransportError,
	ValidationError,
} from '../../core/errors/errors';
import { sandboxClient } from '../support/sandboxClient';
import { startReceiver } from '../support/receiver';
import type { OmniVideoClient } from '../../core/client';

const SPEED = 200;
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a3ba5c2c0000000049454e44ae426082', 'hex');
const MP4 = readFileSync(join(__dirname, '..', '..', 'sandbox', 'fixtures', 'sample.mp4'));
const TINY: PlanLimits = { requestsPerMinute: 3, requestsPerHour: 8, concurrentJobs: 2 };

let sandbox: Sandbox;
let client: OmniVideoClient;

/** Polls with the expected time scaled to the sandbox's speed, as a real client would see it. */
async function generateAndWait(c: OmniVideoClient, input: Parameters<OmniVideoClient['generateVideo']>[0], headers?: never) {
	void headers;
	const created = await c.generateVideo(input);
	return c.waitForJob(created.job.id, { expectedMs: created.expectedMs / SPEED, timeoutMs: 20_000 });
}

function apiRequests(path: string) {
	return sandbox.journal.filter((entry) => entry.path === path);
}

beforeAll(async () => {
	sandbox = await startSandbox({
		port: 0,
		speed: SPEED,
		insecureCallbacks: true,
		holdMs: 300,
		slowMs: 200,
		stormLength: 2,
		maxUploadBytes: 1_000_000,
		accounts: [
			{ id: 'acct_premium', plan: 'premium', balance: 1_000_000, userId: 'user_premium' },
			{ id: 'acct_tiny', plan: TINY, balance: 1_000_000 },
			{ id: 'acct_free', plan: 'none', balance: 0 },
			{ id: 'acct_pair', plan: { requestsPerMinute: 1_000, requestsPerHour: 10_000, concurrentJobs: 2 }, balance: 1_000_000 },
		],
		keys: [
			{ key: 'omni_test_main', account: 'acct_premium', label: 'Premium' },
			{ key: 'omni_test_budget', account: 'acct_premium', budget: 100, label: 'budget' },
			{ key: 'omni_test_tiny', account: 'acct_tiny', label: 'tiny' },
			{ key: 'omni_test_tiny2', account: 'acct_tiny', label: 'tiny 2' },
			{ key: 'omni_test_free', account: 'acct_free', label: 'free' },
			{ key: 'omni_test_pair', account: 'acct_pair', label: 'pair' },
		],
	});
});
afterAll(() => sandbox.close());
beforeEach(() => {
	sandbox.reset();
	client = sandboxClient(sandbox.url, 'omni_test_main', PLANS.premium);
});

describe('core against the sandbox: jobs to done', () => {
	it('text to video: create, one schedule of lookups, done, MP4 downloaded without the key', async () => {
		const job = await generateAndWait(client, { prompt: 'A red fox in the snow', resolution: '720p', duration: 4 });
		expect(job).toMatchObject({ status: 'done', creditsUsed: 20, resultUrls: [expect.stringContaining('/omni/user_premium/')] });
		const video = await client.runtime.transport.plain({ method: 'GET', url: job.resultUrls[0] });
		expect(video.status).toBe(200);
		expect(apiRequests('/api/v1/generate')).toHaveLength(1);
	});

	it('image to video after a real upload (ticket, then PUT without Authorization)', async () => {
		const uploaded = await client.uploadFile({ filename: 'frame.png', contentType: 'image/png', data: PNG });
		expect(uploaded.fileUrl).toContain('/files/');
		const job = await generateAndWait(client, { prompt: 'Make it dance', imageUrl: uploaded.fileUrl });
		expect(job.status).toBe('done');
		expect(sandbox.jobs.all.values().next().value?.body.imageUrl).toBe(uploaded.fileUrl);
	});

	it('video to video after uploading footage', async () => {
		const uploaded = await client.uploadFile({ filename: 'clip.mp4', contentType: 'video/mp4', data: MP4 }, { kind: 'video' });
		const job = await generateAndWait(client, { prompt: 'As a watercolour', videoUrl: uploaded.fileUrl, resolution: '4K' });
		expect(job).toMatchObject({ status: 'done', creditsUsed: 200 });
	});

	it.each([
		['job-fails-internal', 'internal'],
		['job-fails-input-fetch', 'input_fetch_failed'],
	])('%s: the wait rejects with errorCode %s and a hint on what to do', async (scenario, code) => {
		const error = await generateAndWait(client, { prompt: `x [sandbox:${scenario}]` }).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(JobFailedError);
		expect(error).toMatchObject({ code, hint: expect.any(String) });
	});

	it('large-output: core hands back the URL of a large, valid MP4 without touching it', async () => {
		const job = await generateAndWait(client, { prompt: 'big [sandbox:large-output]', resolution: '720P', duration: 4 });
		const head = await client.runtime.transport.plain({ method: 'HEAD', url: job.resultUrls[0] });
		expect(Number(head.headers['content-length'])).toBe(sandbox.config.largeFileBytes);
	});

	it('a failed job rejects with its reason, code and id, and costs nothing', async () => {
		const error = await generateAndWait(client, { prompt: 'x [sandbox:job-fails-content-policy]' }).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(JobFailedError);
		expect(error).toMatchObject({ code: 'content_policy', reason: 'Prompt rejected by content policy', jobId: expect.stringMatching(/^job_/) });
		expect(sandbox.accounts.accounts.get('acct_premium')).toMatchObject({ balance: 1_000_000, reserved: 0 });
	});
});

describe('core against the sandbox: refusals', () => {
	it('400 from the service (a fractional duration core passes on) is a ValidationError naming the field', async () => {
		const error = await client.generateVideo({ prompt: 'p', duration: 5.5 }).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(ValidationError);
		expect((error as ValidationError).problems[0]).toMatchObject({ field: 'duration' });
		expect(apiRequests('/api/v1/generate')).toHaveLength(1);
	});

	it('401 for a bad key is an AuthError, and the credential test tells good from bad', async () => {
		const bad = sandboxClient(sandbox.url, 'omni_test_wrong', PLANS.pro);
		await expect(bad.getJob('job_x')).rejects.toBeInstanceOf(AuthError);
		expect(await bad.testCredentials()).toMatchObject({ ok: false, problem: 'key', message: expect.stringMatching(/API key/) });
		expect(await client.testCredentials()).toMatchObject({ ok: true });
	});

	it('403 for a plan without API access is an AuthError', async () => {
		await expect(sandboxClient(sandbox.url, 'omni_test_free', PLANS.pro).getJob('job_x')).rejects.toBeInstanceOf(AuthError);
	});

	it('402 on the key budget is a CreditsError and is not retried', async () => {
		const budget = sandboxClient(sandbox.url, 'omni_test_budget', PLANS.premium);
		const error = await budget.generateVideo({ prompt: 'p', resolution: '4K' }).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(CreditsError);
		expect(error).toMatchObject({ code: 'key_budget_exceeded' });
		expect(apiRequests('/api/v1/generate')).toHaveLength(1);
		expect(sandbox.jobs.all.size).toBe(0);
	});

	it('404 for an unknown job is a NotFoundError naming it', async () => {
		await expect(client.getJob('job_nope')).rejects.toMatchObject({ kind: 'not_found', jobId: 'job_nope' });
		await expect(client.getJob('job_nope')).rejects.toBeInstanceOf(NotFoundError);
	});

	it('413 for an upload over the size limit is a ValidationError', async () => {
		const big = new Uint8Array(1_000_001);
		big.set(PNG.subarray(0, 8));
		await expect(client.uploadFile({ filename: 'big.png', contentType: 'image/png', data: big })).rejects.toMatchObject({ kind: 'validation', status: 413 });
	});

	it('idempotent replay: the same key returns the same job; another body with it is a 422', async () => {
		const first = await client.generateVideo({ prompt: 'once' }, { idempotencyKey: 'idem_contract_1' });
		const again = await client.generateVideo({ prompt: 'once' }, { idempotencyKey: 'idem_contract_1' });
		expect(again.job.id).toBe(first.job.id);
		expect(again.replayed).toBe(true);
		expect(sandbox.jobs.all.size).toBe(1);
		await expect(client.generateVideo({ prompt: 'different' }, { idempotencyKey: 'idem_contract_1' })).rejects.toMatchObject({
			kind: 'validation',
			code: 'idempotency_key_reused',
		});
	});

	it('409 in flight: core waits and gets the original job', async () => {
		const slow = client.generateVideo({ prompt: 'slow [sandbox:slow-response]' }, { idempotencyKey: 'idem_contract_2' });
		await new Promise((resolve) => setImmediate(resolve));
		const other = sandboxClient(sandbox.url, 'omni_test_main', PLANS.premium);
		const second = await other.generateVideo({ prompt: 'slow [sandbox:slow-response]' }, { idempotencyKey: 'idem_contract_2' });
		expect(second.job.id).toBe((await slow).job.id);
		expect(sandbox.journal.some((e) => e.status === 409)).toBe(true);
	});
});

describe('core against the sandbox: limits', () => {
	it('with the right plan, a burst waits for job slots instead of collecting 429s', async () => {
		// Concurrency is the limit that real time does not scale; the windows are proven on virtual
		// time in the unit tests (a client minute is a real minute, the sandbox's is compressed).
		const roomy = { requestsPerMinute: 1_000, requestsPerHour: 10_000, concurrentJobs: 2 };
		const pair = sandboxClient(sandbox.url, 'omni_test_pair', roomy);
		const jobs = await Promise.all([1, 2, 3, 4, 5].map((i) => generateAndWait(pair, { prompt: `clip ${i}`, resolution: '720P', duration: 4 })));
		expect(jobs.every((j) => j.status === 'done')).toBe(true);
		expect(sandbox.journal.filter((e) => e.key === 'pair' && e.status !== 200 && e.status !== 202)).toEqual([]);
		expect(sandbox.journal.filter((e) => e.key === 'pair' && e.path === '/api/v1/generate')).toHaveLength(5);
	});

	it('when the service is stricter than the plan says, core obeys its 429s (rate and concurrency) and finishes', async () => {
		const optimistic = sandboxClient(sandbox.url, 'omni_test_tiny2', PLANS.premium);
		const jobs = await Promise.all([1, 2, 3].map((i) => generateAndWait(optimistic, { prompt: `clip ${i}`, resolution: '720P', duration: 4 })));
		expect(jobs.every((j) => j.status === 'done')).toBe(true);
		const refusals = sandbox.journal.filter((e) => e.status === 429);
		expect(refusals.length).toBeGreaterThan(0);
		expect(sandbox.jobs.all.size).toBe(3);
	});
});

describe('core against the sandbox: callbacks', () => {
	it('verifies a signed callback, rejects a forged one, and counts duplicates by delivery id', async () => {
		const outcomes: Array<{ accepted: boolean; deliveryId?: string; status?: number }> = [];
		const receiver = await startReceiver([200]);
		try {
			const created = await client.generateVideo({ prompt: 'call me [sandbox:callback-duplicate]', callbackUrl: receiver.url }, { allowInsecureLoopbackCallback: true });
			const deliveries = await receiver.waitFor(2, 10_000);
			for (const delivery of deliveries) {
				const outcome = await client.handleCallback({ headers: delivery.headers, rawBody: delivery.body, secret: sandbox.webhookSecret });
				outcomes.push(outcome.accepted ? { accepted: true, deliveryId: outcome.deliveryId } : { accepted: false, status: outcome.status });
				if (outcome.accepted) expect(outcome.job).toMatchObject({ id: created.job.id, status: 'done' });
			}
			expect(outcomes[0]).toEqual(outcomes[1]);
			const forged = deliveries[0].body.replace('"done"', '"failed"');
			expect(await client.handleCallback({ headers: deliveries[0].headers, rawBody: forged, secret: sandbox.webhookSecret })).toMatchObject({ accepted: false, status: 401 });
			// Without a secret, the lookup decides: a forged claim about a real job gets the truth.
			const unsigned = await client.handleCallback({ headers: {}, rawBody: forged });
			expect(unsigned).toMatchObject({ accepted: true, confirmedBy: 'lookup', job: { status: 'done' } });
		} finally {
			await receiver.close();
		}
	});

	it('out-of-order callbacks: each is judged on its own and both jobs come out right', async () => {
		const receiver = await startReceiver([200]);
		try {
			const late = await client.generateVideo({ prompt: 'late [sandbox:callback-out-of-order]', resolution: '720P', duration: 4, callbackUrl: receiver.url }, { allowInsecureLoopbackCallback: true });
			const early = await client.generateVideo({ prompt: 'early', resolution: '4K', duration: 10, callbackUrl: receiver.url }, { allowInsecureLoopbackCallback: true });
			const deliveries = await receiver.waitFor(2, 10_000);
			const outcomes = await Promise.all(deliveries.map((d) => client.handleCallback({ headers: d.headers, rawBody: d.body, secret: sandbox.webhookSecret })));
			expect(outcomes.map((o) => (o.accepted ? o.job.id : o.reason))).toEqual([early.job.id, late.job.id]);
			expect(client.runtime.limiter.snapshot().activeJobs).toBe(0);
		} finally {
			await receiver.close();
		}
	});

	it('is retried by the service until the receiver accepts, and stopped by 410', async () => {
		const failing = await startReceiver([503, 200]);
		const gone = await startReceiver([410]);
		try {
			await client.generateVideo({ prompt: 'retry', callbackUrl: failing.url }, { allowInsecureLoopbackCallback: true });
			await client.generateVideo({ prompt: 'gone', callbackUrl: gone.url }, { allowInsecureLoopbackCallback: true });
			await failing.waitFor(2, 10_000);
			await gone.waitFor(1, 10_000);
			sandbox.clock.advance(3_600_000);
			await new Promise((resolve) => setTimeout(resolve, 200));
			expect(failing.received).toHaveLength(2);
			expect(gone.received).toHaveLength(1);
		} finally {
			await failing.close();
			await gone.close();
		}
	});
});

describe('core against the sandbox: fault scenarios', () => {
	const create = (scenario: string, key = 'idem_fault') =>
		client.generateVideo({ prompt: `p [sandbox:${scenario}]` }, { idempotencyKey: key }).catch((e: unknown) => e);

	it('500 before acceptance: a ServiceError naming the key, sent once, nothing created', async () => {
		const error = await create('error-500-before-accept');
		expect(error).toBeInstanceOf(ServiceError);
		expect((error as Error).message).toContain('idem_fault');
		expect(apiRequests('/api/v1/generate')).toHaveLength(1);
		expect(sandbox.jobs.all.size).toBe(0);
	});

	it('500 after creation: not resent; a rerun with the same key recovers the job instead of paying twice', async () => {
		const error = await create('error-500-after-create', 'idem_after');
		expect(error).toBeInstanceOf(ServiceError);
		expect(apiRequests('/api/v1/generate')).toHaveLength(1);
		const rerun = await client.generateVideo({ prompt: 'p [sandbox:error-500-after-create]' }, { idempotencyKey: 'idem_after' });
		expect(rerun.replayed).toBe(true);
		expect(sandbox.jobs.all.size).toBe(1);
	});

	it.each(['timeout-after-accept', 'reset-after-accept'])('%s: a TransportError naming the key, never resent', async (scenario) => {
		const error = await create(scenario);
		expect(error).toBeInstanceOf(TransportError);
		expect(error).toMatchObject({ outcomeUnknown: true, idempotencyKey: 'idem_fault' });
		expect((error as Error).message).toContain('idem_fault');
		expect(apiRequests('/api/v1/generate')).toHaveLength(1);
		expect(sandbox.jobs.all.size).toBe(1);
	});

	it('a 429 storm is waited out and the create goes through once', async () => {
		const created = await client.generateVideo({ prompt: 'p' }, { idempotencyKey: 'idem_storm' }).then(async (first) => {
			expect(first.job.status).toBe('queued');
			return first;
		});
		expect(created.job.id).toMatch(/^job_/);
		const stormy = await client.generateVideo({ prompt: 'q [sandbox:rate-limit-storm]' });
		expect(stormy.job.status).toBe('queued');
		expect(apiRequests('/api/v1/generate').filter((e) => e.status === 429)).toHaveLength(2);
		expect(sandbox.jobs.all.size).toBe(2);
	});

	it('a slow response is simply waited for', async () => {
		expect((await client.generateVideo({ prompt: 'p [sandbox:slow-response]' })).job.status).toBe('queued');
	});

	it('malformed JSON on a create: a TransportError naming the key; the job exists', async () => {
		const loose = sandboxClient(sandbox.url, 'omni_test_main', PLANS.premium, { conformanceCheck: false });
		const error = await loose.generateVideo({ prompt: 'p [sandbox:malformed-json]' }, { idempotencyKey: 'idem_malformed' }).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(TransportError);
		expect((error as Error).message).toContain('idem_malformed');
		expect(sandbox.jobs.all.size).toBe(1);
	});

	it('service unavailable on lookups: retried a few times, then a ServiceError', async () => {
		const error = await client.getJob('job_x').then(() => undefined, (e: unknown) => e);
		expect(error).toBeInstanceOf(NotFoundError);
		const unavailableKey = await fetch(`${sandbox.url}/__sandbox/keys`, {
			method: 'POST',
			headers: { 'Content-Type': 'application/json' },
			body: JSON.stringify({ key: 'omni_test_down', account: 'acct_premium', scenarios: ['service-unavailable'] }),
		});
		expect(unavailableKey.status).toBe(201);
		const down = sandboxClient(sandbox.url, 'omni_test_down', PLANS.premium);
		await expect(down.getJob('job_x')).rejects.toBeInstanceOf(ServiceError);
		expect(sandbox.journal.filter((e) => e.key === 'key …down').length).toBeGreaterThan(1);
	}, 30_000);
});
