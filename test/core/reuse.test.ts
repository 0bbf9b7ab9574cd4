import { closeCoreSandboxes, coreSandbox } from '../support/coreHarness';
import { TimeoutError } from '../../core/errors/errors';
import type { PlanLimits } from '../../core/types';

afterEach(closeCoreSandboxes);

/** One job at a time, requests plentiful: what holds a create up is the job slot alone. */
const ONE_AT_ONCE: PlanLimits = { requestsPerMinute: 1_000, requestsPerHour: 10_000, concurrentJobs: 1 };

describe('a create sent again with its key (a retried run)', () => {
	it('returns the original job as it is now, without a second job or a second charge', async () => {
		// Tests core against docs/api.md's decision (a service that replays Idempotency-Key), which --service spec takes away.
		const { time, sandbox, sent, client, restarted } = await coreSandbox({ sandbox: { service: 'default' } });
		const first = await time.run(client.generateVideo({ prompt: 'A kite' }, { idempotencyKey: 'idem_reuse_1' }));
		await time.advance(120_000);
		// Another process (or this one restarted): only the service can tell.
		const again = await time.run(restarted().generateVideo({ prompt: 'A kite' }, { idempotencyKey: 'idem_reuse_1' }));

		expect(again).toMatchObject({ replayed: true, replacedJobIds: [] });
		expect(again.job).toMatchObject({ id: first.job.id, status: 'done', resultUrls: [expect.any(String)] });
		expect(sandbox.jobs.all.size).toBe(1);
		// The replay, then one lookup: the replay is the create's first answer, queued.
		expect(sent.creates()).toHaveLength(2);
		expect(sent.lookups()).toHaveLength(1);
	});

	it('returns a failed job as failed, unless asked to make it again; a retry of that retry finds the new job', async () => {
		// Tests core against docs/api.md's decision (a service that replays Idempotency-Key), which --service spec takes away.
		const { time, sandbox, sent, client } = await coreSandbox({ sandbox: { service: 'default' } });
		const input = { prompt: 'A fox [sandbox:job-fails-content-policy]' };
		const first = await time.run(client.generateVideo(input, { idempotencyKey: 'idem_reuse_2' }));
		await time.advance(120_000);

		const kept = await time.run(client.generateVideo(input, { idempotencyKey: 'idem_reuse_2' }));
		expect(kept.job).toMatchObject({ id: first.job.id, status: 'failed', errorCode: 'content_policy' });
		expect(sandbox.jobs.all.size).toBe(1);

		const remade = await time.run(client.generateVideo(input, { idempotencyKey: 'idem_reuse_2', reuse: { retryFailed: true } }));
		expect(remade.replayed).toBe(false);
		expect(remade.replacedJobIds).toEqual([first.job.id]);
		expect(remade.job.id).not.toBe(first.job.id);
		expect(remade.idempotencyKey).not.toBe('idem_reuse_2');
		expect(sandbox.jobs.all.size).toBe(2);

		// Asked again while the new job renders: the chain leads to it, no third job.
		const sameRetry = await time.run(client.generateVideo(input, { idempotencyKey: 'idem_reuse_2', reuse: { retryFailed: true } }));
		expect(sameRetry).toMatchObject({ replayed: true, replacedJobIds: [first.job.id], idempotencyKey: remade.idempotencyKey });
		expect(sameRetry.job.id).toBe(remade.job.id);
		expect(sandbox.jobs.all.size).toBe(2);
		expect(sent.creates().filter((create) => create.response?.headers['idempotent-replayed'] !== 'true')).toHaveLength(2);
	});

	it('makes a job again when it was made longer ago than maxAgeMs', async () => {
		// Tests core against docs/api.md's decision (a service that replays Idempotency-Key), which --service spec takes away.
		const { time, sandbox, client } = await coreSandbox({ sandbox: { service: 'default' } });
		const first = await time.run(client.generateVideo({ prompt: 'A lake' }, { idempotencyKey: 'idem_reuse_3' }));
		await time.advance(2 * 3_600_000);
		const young = await time.run(client.generateVideo({ prompt: 'A lake' }, { idempotencyKey: 'idem_reuse_3', reuse: { maxAgeMs: 3 * 3_600_000 } }));
		expect(young.job.id).toBe(first.job.id);
		const old = await time.run(client.generateVideo({ prompt: 'A lake' }, { idempotencyKey: 'idem_reuse_3', reuse: { maxAgeMs: 3_600_000 } }));
		expect(old.replacedJobIds).toEqual([first.job.id]);
		expect(sandbox.jobs.all.size).toBe(2);
	});

	it('takes no second place among the jobs at once: the replay of a rendering job does not wait for it', async () => {
		// Tests core against docs/api.md's decision (a service that replays Idempotency-Key), which --service spec takes away.
		const { time, client } = await coreSandbox({ limits: ONE_AT_ONCE, sandbox: { service: 'default' } });
		const first = await time.run(client.generateVideo({ prompt: 'A tram' }, { idempotencyKey: 'idem_reuse_4' }));
		const startedAt = time.clock.now();
		const again = await time.run(client.generateVideo({ prompt: 'A tram' }, { idempotencyKey: 'idem_reuse_4' }));
		expect(again.job.id).toBe(first.job.id);
		expect(again.job.status).not.toBe('done');
		expect(time.clock.now() - startedAt).toBeLessThan(1_000);
	});
});

describe('a job whose poll gave up', () => {
	it('holds its place only while it really renders: the next create looks it up instead of waiting out its hold', async () => {
		const { time, sandbox, sent, client } = await coreSandbox({ limits: ONE_AT_ONCE });
		const first = await time.run(client.generateVideo({ prompt: 'A bridge', resolution: '720P', duration: 4 }));
		const error = await time.run(client.waitForJob(first.job.id, { expectedMs: first.expectedMs, timeoutMs: 5_000 })).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(TimeoutError);

		const second = await time.run(client.generateVideo({ prompt: 'A second bridge', resolution: '720P', duration: 4 }));
		const firstJob = sandbox.jobs.all.get(first.job.id)!;
		const secondJob = sandbox.jobs.all.get(second.job.id)!;
		// Created once the first had ended, and soon after: within one lookup's spacing (10 s), not
		// at the end of the watched hold (2 × expected + 60 s after its create).
		expect(secondJob.createdAt).toBeGreaterThanOrEqual(firstJob.endsAt);
		expect(secondJob.createdAt - firstJob.endsAt).toBeLessThanOrEqual(10_000);
		expect(sent.lookups().length).toBeLessThanOrEqual(6);
	});
});
