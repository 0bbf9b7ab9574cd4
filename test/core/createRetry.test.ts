import { closeCoreSandboxes, coreSandbox, untilJournalHas, withFaults } from '../support/coreHarness';
import { CreditsError, ServiceError, TransportError, ValidationError } from '../../core/errors/errors';

afterEach(closeCoreSandboxes);

describe('retry safety of creates', () => {
	it('never resends a create answered with 5xx, and names the idempotency key', async () => {
		const { time, sent, client } = await coreSandbox();
		const error = await time
			.run(client.generateVideo({ prompt: 'p [sandbox:service-unavailable]' }, { idempotencyKey: 'idem_fixed_1' }))
			.catch((e: unknown) => e);
		expect(error).toBeInstanceOf(ServiceError);
		expect(error).toMatchObject({ status: 503, idempotencyKey: 'idem_fixed_1' });
		expect((error as Error).message).toContain('idem_fixed_1');
		expect(sent.creates()).toHaveLength(1);
	});

	// The sandbox creates the job each time; the client cannot know it did.
	it.each([
		['timeout', { prompt: 'p [sandbox:timeout-after-accept]' }, { deadlineAtMs: 300 }],
		['reset', { prompt: 'p [sandbox:reset-after-accept]' }, {}],
		['other', { prompt: 'p' }, {}],
	] as const)('never resends a create whose connection ended in %s, and names the key', async (failure, input, deadline) => {
		// The sandbox holds a timeout-after-accept answer far longer than the create's deadline allows.
		const { time, sandbox, sent, client } = await coreSandbox({
			sandbox: { holdMs: 10_000 },
			wrapTransport: failure === 'other' ? withFaults([{ answerLost: 'other' }]) : undefined,
		});
		const deadlineAtMs = 'deadlineAtMs' in deadline ? time.clock.now() + deadline.deadlineAtMs : undefined;
		const error = await time.run(client.generateVideo(input, { idempotencyKey: 'idem_fixed_2', deadlineAtMs })).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(TransportError);
		expect(error).toMatchObject({ failure, idempotencyKey: 'idem_fixed_2', outcomeUnknown: true });
		expect((error as Error).message).toContain('idem_fixed_2');
		expect(sent.creates()).toHaveLength(1);
		expect(sandbox.jobs.all.size).toBe(1);
	});

	it('retries a create after a refused connection, with the same key', async () => {
		const { time, sandbox, sent, client } = await coreSandbox({
			wrapTransport: withFaults([{ notSent: 'refused' }, { notSent: 'refused' }]),
		});
		const created = await time.run(client.generateVideo({ prompt: 'p' }));
		expect(created.job.status).toBe('queued');
		const keys = sent.creates().map((r) => r.headers['Idempotency-Key']);
		expect(keys).toHaveLength(3);
		expect(new Set(keys).size).toBe(1);
		expect(keys[0]).toBe(created.idempotencyKey);
		expect(sandbox.jobs.all.size).toBe(1);
	});

	it('retries a create on 429 concurrency_limited after Retry-After', async () => {
		// Tests core against docs/api.md's decision (429 concurrency_limited with Retry-After, and Idempotency-Key's 409), which --service spec takes away.
		const { time, sandbox, sent, others, client } = await coreSandbox({ sandbox: { service: 'default' } });
		// Someone else's five jobs take the account's slots; the client asks 7 s before the first ends.
		await others.creates(5);
		const firstEnd = Math.min(...[...sandbox.jobs.all.values()].map((job) => job.endsAt));
		await time.advance(firstEnd - 7_000 - time.clock.now());
		await time.run(client.generateVideo({ prompt: 'p' }));
		const [first, second] = sent.creates();
		expect(first.response).toMatchObject({ status: 429, headers: { 'retry-after': '7' }, body: { error: { code: 'concurrency_limited' } } });
		expect(second.response).toMatchObject({ status: 202 });
		expect(second.at - first.at).toBeGreaterThanOrEqual(7_000);
	});

	it('asks again on 409 idempotency_conflict (the same key still in flight)', async () => {
		// Tests core against docs/api.md's decision (429 concurrency_limited with Retry-After, and Idempotency-Key's 409), which --service spec takes away.
		const { time, sandbox, sent, others, client } = await coreSandbox({ sandbox: { slowMs: 200, service: 'default' } });
		// Another process sends the same create with the same key; the service is slow to answer it.
		const input = { prompt: 'p [sandbox:slow-response]' };
		const elsewhere = others.client().generateVideo(input, { idempotencyKey: 'idem_shared_1' });
		await untilJournalHas(sandbox, (entry) => entry.idempotencyKey === 'idem_shared_1');
		const created = await time.run(client.generateVideo(input, { idempotencyKey: 'idem_shared_1' }));
		expect(sent.creates()).toHaveLength(2);
		expect(sent.creates()[0].response).toMatchObject({ status: 409, body: { error: { code: 'idempotency_conflict' } } });
		expect(created.job.id).toBe((await time.run(elsewhere)).job.id);
	});

	it('does not retry 402', async () => {
		const { time, sent, client } = await coreSandbox({ key: 'budget' });
		await expect(time.run(client.generateVideo({ prompt: 'p' }))).rejects.toBeInstanceOf(CreditsError);
		expect(sent.creates()).toHaveLength(1);
	});

	it('retries lookups through 5xx, timeouts and resets', async () => {
		const { time, sandbox, sent, client } = await coreSandbox({
			wrapTransport: withFaults([{ scenario: 'service-unavailable' }, { answerLost: 'timeout' }, { answerLost: 'reset' }], (r) => r.method === 'GET'),
		});
		const created = await time.run(client.generateVideo({ prompt: 'p' }));
		const job = await time.run(client.getJob(created.job.id));
		expect(job.id).toBe(created.job.id);
		expect(sent.lookups()).toHaveLength(4);
		expect(sandbox.journal.filter((entry) => entry.method === 'GET').map((entry) => entry.status)).toEqual([503, 200, 200, 200]);
	});

	it('gives up on a lookup after a bounded number of failures', async () => {
		const { time, sent, client } = await coreSandbox({ key: 'down' });
		await expect(time.run(client.getJob('job_x'))).rejects.toBeInstanceOf(ServiceError);
		expect(sent.lookups().length).toBeLessThanOrEqual(5);
	});

	it('sends nothing at all for an invalid request', async () => {
		const { time, sandbox, sent, client } = await coreSandbox();
		await expect(time.run(client.generateVideo({ prompt: '', duration: 12 }))).rejects.toBeInstanceOf(ValidationError);
		expect(sent.requests).toHaveLength(0);
		expect(sandbox.journal).toHaveLength(0);
	});

	it('reports an unreadable 202 as a created job of unknown id, naming the key', async () => {
		const { time, sandbox, sent, client } = await coreSandbox();
		const error = await time
			.run(client.generateVideo({ prompt: 'p [sandbox:malformed-json]' }, { idempotencyKey: 'idem_fixed_3' }))
			.catch((e: unknown) => e);
		expect(error).toBeInstanceOf(TransportError);
		expect((error as Error).message).toContain('idem_fixed_3');
		expect(sent.creates()).toHaveLength(1);
		expect(sandbox.jobs.all.size).toBe(1);
	});
});
