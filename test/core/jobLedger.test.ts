import { closeCoreSandboxes, coreSandbox } from '../support/coreHarness';
import { CreateOutcomeUnknownError, hostLedger, type JobLedger, type LedgerEntry } from '../../core';

afterEach(closeCoreSandboxes);

/** A host's record of its creates (n8n keeps it in the node's execution context). */
function memoryLedger(): JobLedger & { entries: Map<string, LedgerEntry> } {
	const entries = new Map<string, LedgerEntry>();
	return { entries, ...hostLedger({ find: (key) => entries.get(key), note: (key, entry) => void entries.set(key, entry), forget: (key) => void entries.delete(key) }) };
}

describe('the ledger: a run asked again gets its jobs from our own records, on any reading of the service', () => {
	it('a key it names is looked up, never created again; a failed job is made again only when asked', async () => {
		const { time, sandbox, sent, client } = await coreSandbox({ sandbox: { service: 'spec' } });
		const ledger = memoryLedger();
		const input = { prompt: 'A heron [sandbox:job-fails-content-policy]' };
		const first = await time.run(client.generateVideo(input, { idempotencyKey: 'idem_ledger_1', ledger }));
		expect(ledger.entries.get('idem_ledger_1')).toEqual({ jobId: first.job.id });
		await time.advance(120_000);

		const again = await time.run(client.generateVideo(input, { idempotencyKey: 'idem_ledger_1', ledger }));
		expect(again).toMatchObject({ replayed: true, job: { id: first.job.id, status: 'failed' } });
		expect(sent.creates()).toHaveLength(1);

		const remade = await time.run(client.generateVideo(input, { idempotencyKey: 'idem_ledger_1', ledger, reuse: { retryFailed: true } }));
		expect(remade.replacedJobIds).toEqual([first.job.id]);
		expect(sandbox.jobs.all.size).toBe(2);
		// A retry of that retry finds the new job in the ledger too.
		const sameRetry = await time.run(client.generateVideo(input, { idempotencyKey: 'idem_ledger_1', ledger, reuse: { retryFailed: true } }));
		expect(sameRetry.job.id).toBe(remade.job.id);
		expect(sent.creates()).toHaveLength(2);
	});

	it('a create sent whose answer was never seen is not sent again: the error says when, and what to check', async () => {
		const { time, sent, client } = await coreSandbox({ sandbox: { service: 'spec' } });
		const ledger = memoryLedger();
		ledger.note('idem_ledger_2', { sentAtMs: Date.parse('2026-01-02T03:04:05Z') });
		const error = await time.run(client.generateVideo({ prompt: 'A crane' }, { idempotencyKey: 'idem_ledger_2', ledger })).catch((caught: unknown) => caught);
		expect(error).toBeInstanceOf(CreateOutcomeUnknownError);
		expect(String((error as Error).message)).toContain('2026-01-02T03:04:05.000Z');
		expect(sent.creates()).toHaveLength(0);
	});

	it('a create refused here before it left (no turn in time, or cancelled while waiting) leaves no record: the next run sends it', async () => {
		const { time, sent, client } = await coreSandbox({ sandbox: { service: 'spec' } });
		const ledger = memoryLedger();
		const input = { prompt: 'A kingfisher' };
		// Nobody on the key sends for a minute (as after a 429 with Retry-After).
		client.runtime.limiter.pause(60_000);
		const deadlineAtMs = client.runtime.clock.now() + 5_000;
		const refused = await time.run(client.generateVideo(input, { idempotencyKey: 'idem_ledger_3', ledger, deadlineAtMs })).catch((caught: unknown) => caught);
		expect(refused).toMatchObject({ kind: 'rate_limit', code: 'rate_limited_locally' });
		const controller = new AbortController();
		const cancelled = client.generateVideo(input, { idempotencyKey: 'idem_ledger_3', ledger, signal: controller.signal }).catch((caught: unknown) => caught);
		await time.advance(1_000);
		controller.abort();
		expect(await time.run(cancelled)).toMatchObject({ code: 'cancelled' });
		expect(ledger.entries.size).toBe(0);
		expect(sent.creates()).toHaveLength(0);

		await time.advance(60_000);
		const made = await time.run(client.generateVideo(input, { idempotencyKey: 'idem_ledger_3', ledger }));
		expect(ledger.entries.get('idem_ledger_3')).toEqual({ jobId: made.job.id });
		expect(sent.creates()).toHaveLength(1);
	});

	it('with finishOnceSent a cancel stops a create only while it waits: once sent, its answer and job are kept', async () => {
		const inFlight = new AbortController();
		const { time, sent, client, sandbox } = await coreSandbox({
			sandbox: { service: 'spec' },
			wrapTransport: (transport) => ({
				...transport,
				// The caller goes away the moment the create leaves.
				api: (request) => {
					if (request.method === 'POST') inFlight.abort();
					return transport.api(request);
				},
			}),
		});
		const ledger = memoryLedger();
		const input = { prompt: 'A cormorant' };
		// Cancelled while it waits for its turn: nothing is sent, nothing noted.
		client.runtime.limiter.pause(10_000);
		const waiting = new AbortController();
		const stopped = client.generateVideo(input, { idempotencyKey: 'idem_ledger_5', ledger, signal: waiting.signal, finishOnceSent: true }).catch((caught: unknown) => caught);
		await time.advance(1_000);
		waiting.abort();
		expect(await time.run(stopped)).toMatchObject({ code: 'cancelled' });
		expect(sent.creates()).toHaveLength(0);
		await time.advance(10_000);

		const created = await time.run(client.generateVideo(input, { idempotencyKey: 'idem_ledger_5', ledger, signal: inFlight.signal, finishOnceSent: true }));
		expect(inFlight.signal.aborted).toBe(true);
		expect(ledger.entries.get('idem_ledger_5')).toEqual({ jobId: created.job.id });
		expect(sandbox.jobs.all.size).toBe(1);
	});

	it('records the host lost or overwrote with older ones: this process still knows the jobs it made, for the same body only', async () => {
		// n8n 2.x can resume an execution with data read before another process ran and parked a
		// step: that step's rows look unmade again (docs/n8n-internals.md).
		const { time, sandbox, sent, client, restarted } = await coreSandbox({ sandbox: { service: 'spec' } });
		const input = { prompt: 'A swift' };
		const made = await time.run(client.generateVideo(input, { idempotencyKey: 'idem_ledger_4', ledger: memoryLedger() }));
		const stale = memoryLedger();
		const again = await time.run(client.generateVideo(input, { idempotencyKey: 'idem_ledger_4', ledger: stale }));
		expect(again).toMatchObject({ replayed: true, job: { id: made.job.id } });
		// Noted again where the host keeps its records.
		expect(stale.entries.get('idem_ledger_4')).toEqual({ jobId: made.job.id });
		expect(sent.creates()).toHaveLength(1);
		// Another body with the key is not this job: sent, and the service decides.
		await time.run(client.generateVideo({ prompt: 'A swallow' }, { idempotencyKey: 'idem_ledger_4' }));
		expect(sent.creates()).toHaveLength(2);
		// Another process knows nothing of it: on this reading, that is a second job.
		await time.run(restarted().generateVideo(input, { idempotencyKey: 'idem_ledger_4' }));
		expect(sandbox.jobs.all.size).toBe(3);
	});
});

describe('when a job’s render time counts from', () => {
	it('a call that joins a create in flight gets the time its answer came, as the sender does; a job from the records has none', async () => {
		const { time, client } = await coreSandbox({ sandbox: { service: 'spec' } });
		const ledger = memoryLedger();
		const input = { prompt: 'A lighthouse at dusk' };
		// The MCP server once took the joining call for a job picked up late and counted it as half rendered.
		const [sent, joined] = await time.run(Promise.all([client.generateVideo(input, { idempotencyKey: 'idem_joined', ledger }), client.generateVideo(input, { idempotencyKey: 'idem_joined', ledger })]));
		expect(sent.replayed).toBe(false);
		expect(joined).toMatchObject({ replayed: true, job: { id: sent.job.id } });
		expect(sent.answeredAtMs).toEqual(expect.any(Number));
		expect(joined.answeredAtMs).toBe(sent.answeredAtMs);
		await time.advance(10_000);
		const fromRecords = await time.run(client.generateVideo(input, { idempotencyKey: 'idem_joined', ledger }));
		expect(fromRecords).toMatchObject({ replayed: true, job: { id: sent.job.id } });
		expect(fromRecords.answeredAtMs).toBeUndefined();
	});
});
