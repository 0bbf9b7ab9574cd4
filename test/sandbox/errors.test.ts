import { startSandbox, type Sandbox } from '../../sandbox';
import { CheckedHttp } from '../support/checkedHttp';

let sandbox: Sandbox;
let http: CheckedHttp;

beforeAll(async () => {
	sandbox = await startSandbox({ port: 0, speed: 1 });
	http = new CheckedHttp(sandbox.url, sandbox.keys.premium);
});
afterAll(() => sandbox.close());

const code = (response: { body: unknown }) => (response.body as { error: { code: string } }).error.code;

describe('sandbox refusals', () => {
	it.each([
		['a wrong model', { model: 'sora' }, 'invalid_model'],
		['no prompt', { prompt: undefined }, 'invalid_request'],
		['an empty prompt', { prompt: '  ' }, 'invalid_request'],
		['a prompt of 2001 code points', { prompt: '🎬'.repeat(2001) }, 'prompt_too_long'],
		['a lower-case resolution (the sandbox is strict)', { resolution: '1080p' }, 'invalid_resolution'],
		['an unknown resolution', { resolution: '8K' }, 'invalid_resolution'],
		['a fractional duration', { duration: 5.5 }, 'invalid_duration'],
		['a duration of 11', { duration: 11 }, 'invalid_duration'],
		['a duration as text', { duration: '8' }, 'invalid_duration'],
		['both image and video', { imageUrl: 'https://x.test/a.png', videoUrl: 'https://x.test/a.mp4' }, 'conflicting_inputs'],
		['an http callback', { callbackUrl: 'http://hooks.example.com/x' }, 'invalid_callback_url'],
		['an http loopback callback without the switch', { callbackUrl: 'http://127.0.0.1:9/x' }, 'invalid_callback_url'],
		['an unknown field', { style: 'noir' }, 'invalid_request'],
		['an image URL that is not a URL', { imageUrl: 'frame.png' }, 'invalid_request'],
	])('400 for %s', async (_what, fields, expected) => {
		const response = await http.generate({ prompt: 'A fox', ...fields });
		expect(response.status).toBe(400);
		expect(code(response)).toBe(expected);
		expect((response.body as { error: { requestId: string } }).error.requestId).toBe(response.headers['x-request-id']);
	});

	it('400 for a body that is not JSON', async () => {
		const response = await http.request('POST', '/api/v1/generate', { body: '{"model":', headers: { 'Content-Type': 'application/json' } });
		expect(response.status).toBe(400);
		expect(code(response)).toBe('invalid_request');
	});

	it.each([
		['no key', null],
		['an unknown key', 'omni_test_nobody'],
		['a revoked key', 'omni_test_revoked'],
	])('401 for %s', async (_what, key) => {
		const response = await http.request('GET', '/api/v1/jobs/job_credential_check', { key });
		expect(response.status).toBe(401);
		expect(code(response)).toBe('unauthorized');
	});

	it('404 for the credential-check job with a good key, and for another account’s job', async () => {
		expect(code(await http.job('job_credential_check'))).toBe('not_found');
		const created = await http.generate({ prompt: 'mine' }, {}, sandbox.keys.pro);
		const other = await http.job((created.body as { id: string }).id, sandbox.keys.premium);
		expect(other.status).toBe(404);
	});

	it('403 for a plan without API access', async () => {
		const response = await http.job('job_x', sandbox.keys.noApiAccess);
		expect(response.status).toBe(403);
		expect(code(response)).toBe('forbidden');
	});

	it('404 in the error shape for an endpoint the document does not have', async () => {
		const response = await fetch(`${sandbox.url}/api/v1/jobs/a/b`, { headers: { Authorization: `Bearer ${sandbox.keys.premium}` } });
		expect(response.status).toBe(404);
		expect(await response.json()).toMatchObject({ error: { code: 'not_found', requestId: expect.stringMatching(/^req_/) } });
	});
});

describe('bad input gets the 4xx the API would give, never a 500', () => {
	const lastEntry = () => sandbox.journal[sandbox.journal.length - 1];

	it.each(['%E0%A4%A', 'job_%', '%FF', '%'])('400 invalid_request for a job id with broken percent-encoding (%s)', async (id) => {
		const response = await http.request('GET', `/api/v1/jobs/${id}`);
		expect(response.status).toBe(400);
		expect(code(response)).toBe('invalid_request');
		expect(lastEntry()).toMatchObject({ method: 'GET', path: `/api/v1/jobs/${id}`, status: 400, key: expect.any(String) });
	});

	it('404 in the error shape for a CDN path with broken percent-encoding', async () => {
		const response = await fetch(`${sandbox.url}/omni/user_x/%E0%A4%A/output.mp4`);
		expect(response.status).toBe(404);
		expect(await response.json()).toMatchObject({ error: { code: 'not_found', requestId: expect.stringMatching(/^req_/) } });
	});

	it.each(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'])(
		'415 unsupported_media_type for a create sent as %s, and no job',
		async (type) => {
			const jobs = sandbox.jobs.all.size;
			const body = JSON.stringify({ model: 'omni-video', prompt: 'A fox' });
			const response = await http.request('POST', '/api/v1/generate', { body, headers: { 'Content-Type': type } });
			expect(response.status).toBe(415);
			expect(code(response)).toBe('unsupported_media_type');
			expect(sandbox.jobs.all.size).toBe(jobs);
			expect(lastEntry()).toMatchObject({ method: 'POST', path: '/api/v1/generate', status: 415, key: expect.any(String) });
		},
	);

	it('415 for an upload ticket asked for as text/plain', async () => {
		const body = JSON.stringify({ filename: 'a.png', contentType: 'image/png', size: 10 });
		const response = await http.request('POST', '/api/upload', { body, headers: { 'Content-Type': 'text/plain' } });
		expect(response.status).toBe(415);
	});

	const admin = (path: string, body: string) =>
		fetch(`${sandbox.url}/__sandbox/${path}`, { method: 'POST', body, headers: { 'Content-Type': 'application/json' } });

	it.each([
		['keys', '{"key":', 400, 'invalid_request'],
		['keys', 'null', 400, 'invalid_request'],
		['keys', '[1,2]', 400, 'invalid_request'],
		['keys', '{"account":"acct_premium"}', 400, 'invalid_request'],
		['keys', '{"key":"omni_test_x","account":"acct_nobody"}', 404, 'not_found'],
		['clock', '{"speed":', 400, 'invalid_request'],
		['clock', '"fast"', 400, 'invalid_request'],
	])('admin POST %s with %s: %d %s', async (path, body, status, expected) => {
		const response = await admin(path, body);
		expect(response.status).toBe(status);
		expect(await response.json()).toMatchObject({ error: { code: expected, message: expect.any(String), requestId: expect.stringMatching(/^req_/) } });
	});

	it('an admin key for an unknown account is not added', async () => {
		await admin('keys', '{"key":"omni_test_orphan","account":"acct_nobody"}');
		expect(sandbox.accounts.find('omni_test_orphan')).toBeUndefined();
	});
});
