import { fakeClient } from '../support/coreHarness';
import { json } from '../support/fakeApi';
import { CreditsError, ServiceError, TransportError, ValidationError } from '../../core/errors';

const unavailable = json(503, { error: { code: 'unavailable', message: 'down', requestId: 'req_503' } });

describe('retry safety of creates', () => {
	it('never resends a create answered with 5xx, and names the idempotency key', async () => {
		const { time, api, client } = fakeClient();
		api.script.push({ response: unavailable });
		const error = await time.run(client.generateVideo({ prompt: 'p' }, { idempotencyKey: 'idem_fixed_1' })).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(ServiceError);
		expect(error).toMatchObject({ status: 503, idempotencyKey: 'idem_fixed_1' });
		expect((error as Error).message).toContain('idem_fixed_1');
		expect(api.creates()).toHaveLength(1);
	});

	it.each(['timeout', 'reset', 'other'] as const)(
		'never resends a create whose connection ended in %s, and names the key',
		async (failure) => {
			const { time, api, client } = fakeClient();
			api.script.push({ failure });
			const error = await time.run(client.generateVideo({ prompt: 'p' }, { idempotencyKey: 'idem_fixed_2' })).catch((e: unknown) => e);
			expect(error).toBeInstanceOf(TransportError);
			expect(error).toMatchObject({ failure, idempotencyKey: 'idem_fixed_2', outcomeUnknown: true });
			expect((error as Error).message).toContain('idem_fixed_2');
			expect(api.creates()).toHaveLength(1);
		},
	);

	it('retries a create after a refused connection, with the same key', async () => {
		const { time, api, client } = fakeClient();
		api.script.push({ failure: 'refused' }, { failure: 'refused' });
		const created = await time.run(client.generateVideo({ prompt: 'p' }));
		expect(created.job.status).toBe('queued');
		const keys = api.creates().map((r) => r.headers['Idempotency-Key']);
		expect(keys).toHaveLength(3);
		expect(new Set(keys).size).toBe(1);
		expect(keys[0]).toBe(created.idempotencyKey);
	});

	it('retries a create on 429 concurrency_limited after Retry-After', async () => {
		const { time, api, client } = fakeClient();
		api.script.push({ response: json(429, { error: { code: 'concurrency_limited', message: 'busy' } }, { 'retry-after': '7' }) });
		await time.run(client.generateVideo({ prompt: 'p' }));
		const [first, second] = api.creates();
		expect(second.at - first.at).toBeGreaterThanOrEqual(7_000);
	});

	it('asks again on 409 idempotency_conflict (the same key still in flight)', async () => {
		const { time, api, client } = fakeClient();
		api.script.push({ response: json(409, { error: { code: 'idempotency_conflict', message: 'in flight' } }) });
		await time.run(client.generateVideo({ prompt: 'p' }));
		expect(api.creates()).toHaveLength(2);
	});

	it('does not retry 402', async () => {
		const { time, api, client } = fakeClient();
		api.script.push({ response: json(402, { error: { code: 'key_budget_exceeded', message: 'budget' } }) });
		await expect(time.run(client.generateVideo({ prompt: 'p' }))).rejects.toBeInstanceOf(CreditsError);
		expect(api.creates()).toHaveLength(1);
	});

	it('retries lookups through 5xx, timeouts and resets', async () => {
		const { time, api, client } = fakeClient();
		const created = await time.run(client.generateVideo({ prompt: 'p' }));
		api.script.push({ response: unavailable }, { failure: 'timeout' }, { failure: 'reset' });
		const job = await time.run(client.getJob(created.job.id));
		expect(job.id).toBe(created.job.id);
		expect(api.lookups()).toHaveLength(4);
	});

	it('gives up on a lookup after a bounded number of failures', async () => {
		const { time, api, client } = fakeClient();
		for (let i = 0; i < 10; i++) api.script.push({ response: unavailable });
		await expect(time.run(client.getJob('job_x'))).rejects.toBeInstanceOf(ServiceError);
		expect(api.lookups().length).toBeLessThanOrEqual(5);
	});

	it('sends nothing at all for an invalid request', async () => {
		const { time, api, client } = fakeClient();
		await expect(time.run(client.generateVideo({ prompt: '', duration: 12 }))).rejects.toBeInstanceOf(ValidationError);
		expect(api.requests).toHaveLength(0);
	});

	it('reports an unreadable 202 as a created job of unknown id, naming the key', async () => {
		const { time, api, client } = fakeClient();
		api.script.push({ response: { status: 202, headers: {}, body: '{"id": "job_1", "sta' } });
		const error = await time.run(client.generateVideo({ prompt: 'p' }, { idempotencyKey: 'idem_fixed_3' })).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(TransportError);
		expect((error as Error).message).toContain('idem_fixed_3');
		expect(api.creates()).toHaveLength(1);
	});
});
