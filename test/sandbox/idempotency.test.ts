/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test tooling, never shipped */
import { startSandbox, type Sandbox } from '../../sandbox';
import { CheckedHttp } from '../support/checkedHttp';

let sandbox: Sandbox;
let http: CheckedHttp;

beforeAll(async () => {
	sandbox = await startSandbox({ port: 0, speed: 1, slowMs: 400 });
	http = new CheckedHttp(sandbox.url, sandbox.keys.premium);
});
afterAll(() => sandbox.close());

describe('sandbox idempotency', () => {
	it('replays the original answer for the same key and body: one job, one charge', async () => {
		const first = await http.generate({ prompt: 'once' }, { 'Idempotency-Key': 'idem-1' });
		const again = await http.generate({ prompt: 'once' }, { 'Idempotency-Key': 'idem-1' });
		expect(again.status).toBe(202);
		expect(again.body).toEqual(first.body);
		expect(again.headers['idempotent-replayed']).toBe('true');
		expect(first.headers['idempotent-replayed']).toBeUndefined();
		expect([...sandbox.jobs.all.values()].filter((j) => j.body.prompt === 'once')).toHaveLength(1);
		expect(sandbox.accounts.accounts.get('acct_premium')?.reserved).toBe(80);
	});

	it('answers 422 for the same key with another body', async () => {
		await http.generate({ prompt: 'first body' }, { 'Idempotency-Key': 'idem-2' });
		const reused = await http.generate({ prompt: 'second body' }, { 'Idempotency-Key': 'idem-2' });
		expect(reused.status).toBe(422);
		expect(reused.body).toMatchObject({ error: { code: 'idempotency_key_reused' } });
	});

	it('answers 409 while the same key is still in flight', async () => {
		const slow = http.generate({ prompt: 'slow' }, { 'Idempotency-Key': 'idem-3', 'X-Sandbox-Scenario': 'slow-response' });
		await new Promise((resolve) => setImmediate(resolve));
		const conflict = await http.generate({ prompt: 'slow' }, { 'Idempotency-Key': 'idem-3' });
		expect(conflict.status).toBe(409);
		expect(conflict.body).toMatchObject({ error: { code: 'idempotency_conflict' } });
		expect((await slow).status).toBe(202);
	});

	it('forgets a key whose request created nothing, so it can be retried', async () => {
		const refused = await http.generate({ prompt: 'later' }, { 'Idempotency-Key': 'idem-4', 'X-Sandbox-Scenario': 'error-500-before-accept' });
		expect(refused.status).toBe(500);
		expect((await http.generate({ prompt: 'later' }, { 'Idempotency-Key': 'idem-4' })).status).toBe(202);
	});

	it('scopes keys per account', async () => {
		await http.generate({ prompt: 'account A' }, { 'Idempotency-Key': 'idem-5' });
		const other = await http.generate({ prompt: 'account B' }, { 'Idempotency-Key': 'idem-5' }, sandbox.keys.pro);
		expect(other.status).toBe(202);
		expect(other.headers['idempotent-replayed']).toBeUndefined();
	});

	it('keeps keys for 24 hours', async () => {
		const first = await http.request('POST', '/api/upload', { body: { filename: 'a.png', contentType: 'image/png', size: 10 }, headers: { 'Idempotency-Key': 'idem-6' } });
		const replay = await http.request('POST', '/api/upload', { body: { filename: 'a.png', contentType: 'image/png', size: 10 }, headers: { 'Idempotency-Key': 'idem-6' } });
		expect(replay.body).toEqual(first.body);
		sandbox.clock.advance(24 * 3_600_000 + 1_000);
		const fresh = await http.request('POST', '/api/upload', { body: { filename: 'a.png', contentType: 'image/png', size: 10 }, headers: { 'Idempotency-Key': 'idem-6' } });
		expect(fresh.body).not.toEqual(first.body);
	});
});
