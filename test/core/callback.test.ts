import vector from '../fixtures/webhook-test-vector.json';
import { closeCoreSandboxes, coreSandbox } from '../support/coreHarness';
import { signWebhook } from '../../core/callbacks/signature';

const SECRET = vector.secret;

function signed(body: string, nowMs: number, id = 'msg_1'): Record<string, string> {
	const ts = Math.floor(nowMs / 1000);
	return { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': signWebhook(SECRET, id, ts, body) };
}

afterEach(closeCoreSandboxes);

describe('callback handling', () => {
	it('accepts a signed callback without a lookup', async () => {
		const { time, sent, client } = await coreSandbox();
		const body = JSON.stringify({ id: 'job_9', status: 'done', resultUrls: ['https://cdn/x.mp4'] });
		const outcome = await time.run(client.handleCallback({ rawBody: body, headers: signed(body, time.clock.now()), secret: SECRET }));
		expect(outcome).toMatchObject({ accepted: true, confirmedBy: 'signature', deliveryId: 'msg_1', job: { id: 'job_9', status: 'done' } });
		expect(sent.requests).toHaveLength(0);
	});

	it('rejects a tampered body when a secret is set', async () => {
		const { time, client } = await coreSandbox();
		const body = JSON.stringify({ id: 'job_9', status: 'failed', error: 'x' });
		const headers = signed(body, time.clock.now());
		const outcome = await time.run(client.handleCallback({ rawBody: body.replace('failed', 'done'), headers, secret: SECRET }));
		expect(outcome).toMatchObject({ accepted: false, status: 401 });
	});

	it('rejects an unsigned callback when a secret is set', async () => {
		const { time, client } = await coreSandbox();
		const body = JSON.stringify({ id: 'job_9', status: 'done' });
		const outcome = await time.run(client.handleCallback({ rawBody: body, headers: {}, secret: SECRET }));
		expect(outcome).toMatchObject({ accepted: false, status: 401 });
	});

	it('confirms an unsigned callback by lookup and trusts only the lookup', async () => {
		const { time, sent, client } = await coreSandbox();
		const created = await time.run(client.generateVideo({ prompt: 'real job' }));
		await time.advance(90_000); // the longest a job renders
		const forgedClaim = JSON.stringify({ id: created.job.id, status: 'failed', error: 'forged' });
		const outcome = await time.run(client.handleCallback({ rawBody: forgedClaim, headers: {} }));
		expect(outcome).toMatchObject({ accepted: true, confirmedBy: 'lookup', job: { status: 'done' } });
		expect(sent.lookups()).toHaveLength(1);
	});

	it('with confirmStaleByLookup, a rightly signed callback older than 300 s is confirmed by lookup; without it, or wrongly signed, it is refused', async () => {
		const { time, sent, client } = await coreSandbox();
		const created = await time.run(client.generateVideo({ prompt: 'held in a backlog' }));
		await time.advance(90_000);
		const body = JSON.stringify({ id: created.job.id, status: 'done' });
		const headers = signed(body, time.clock.now() - 900_000);
		expect(await time.run(client.handleCallback({ rawBody: body, headers, secret: SECRET }))).toMatchObject({ accepted: false, status: 401 });
		const lookupsBefore = sent.lookups().length;
		const late = await time.run(client.handleCallback({ rawBody: body, headers, secret: SECRET, confirmStaleByLookup: true }));
		expect(late).toMatchObject({ accepted: true, confirmedBy: 'lookup', job: { id: created.job.id, status: 'done' } });
		expect(sent.lookups().length).toBe(lookupsBefore + 1);
		const tampered = await time.run(client.handleCallback({ rawBody: body.replace('done', 'failed'), headers, secret: SECRET, confirmStaleByLookup: true }));
		expect(tampered).toMatchObject({ accepted: false, status: 401 });
		expect(sent.lookups().length).toBe(lookupsBefore + 1);
	});

	it('refuses a forged callback for a job that does not exist', async () => {
		const { time, client } = await coreSandbox();
		const outcome = await time.run(client.handleCallback({ rawBody: JSON.stringify({ id: 'job_forged', status: 'done' }), headers: {} }));
		expect(outcome).toMatchObject({ accepted: false, status: 404, jobId: 'job_forged' });
	});

	it('refuses a premature callback for a job still running', async () => {
		const { time, client } = await coreSandbox();
		const created = await time.run(client.generateVideo({ prompt: 'slow' }));
		const outcome = await time.run(client.handleCallback({ rawBody: JSON.stringify({ id: created.job.id, status: 'done' }), headers: {} }));
		expect(outcome).toMatchObject({ accepted: false, status: 409 });
	});

	it('refuses a body that is not a job', async () => {
		const { time, client } = await coreSandbox();
		for (const rawBody of ['not json', '[]', '{"status":"done"}']) {
			const outcome = await time.run(client.handleCallback({ rawBody, headers: {} }));
			expect(outcome).toMatchObject({ accepted: false, status: 400 });
		}
	});
});
