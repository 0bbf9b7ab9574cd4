import { startSandbox, type Sandbox } from '../../sandbox';
import { CheckedHttp } from '../support/checkedHttp';
import { eventually } from '../support/receiver';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a3ba5c2c0000000049454e44ae426082', 'hex');

let sandbox: Sandbox;
let http: CheckedHttp;

beforeAll(async () => {
	sandbox = await startSandbox({ port: 0, speed: 600 });
	http = new CheckedHttp(sandbox.url, sandbox.keys.premium);
});
afterAll(() => sandbox.close());

async function untilFinished(id: string) {
	return eventually(async () => {
		const response = await http.job(id);
		const status = (response.body as { status: string }).status;
		return status === 'done' || status === 'failed' ? response : undefined;
	});
}

describe('sandbox jobs', () => {
	it('renders a text-to-video job through queued and processing to done, and serves a real MP4', async () => {
		// Real time while the job is looked up running, so that a slow machine cannot see it done already.
		sandbox.clock.setSpeed(1);
		const created = await http.generate({ prompt: 'A red fox in the snow', resolution: '720P', duration: 4 });
		expect(created.status).toBe(202);
		expect(created.body).toEqual({ id: expect.stringMatching(/^job_/), status: 'queued', creditsQueued: 20 });
		const id = (created.body as { id: string }).id;
		expect(created.headers.location).toBe(`/api/v1/jobs/${id}`);
		expect((await http.job(id)).body).toMatchObject({ status: expect.stringMatching(/queued|processing/) });
		sandbox.clock.setSpeed(600);
		sandbox.clock.advance(30_000);
		const done = await untilFinished(id);
		const job = done.body as { status: string; resultUrls: string[]; creditsUsed: number; progress: number };
		expect(job).toMatchObject({ status: 'done', creditsUsed: 20, progress: 100 });
		expect(job.resultUrls[0]).toMatch(new RegExp(`/omni/user_premium/${id}/output\\.mp4$`));

		const video = await http.request('GET', job.resultUrls[0], { key: null });
		expect(video.status).toBe(200);
		expect(video.headers['content-type']).toBe('video/mp4');
		expect(video.bytes.subarray(4, 8).toString('ascii')).toBe('ftyp');
		expect(Number(video.headers['content-length'])).toBe(video.bytes.length);

		const part = await http.request('GET', job.resultUrls[0], { key: null, headers: { Range: 'bytes=4-11' } });
		expect(part.status).toBe(206);
		expect(part.headers['content-range']).toBe(`bytes 4-11/${video.bytes.length}`);
		expect(part.bytes).toEqual(video.bytes.subarray(4, 12));
		const tail = await http.request('GET', job.resultUrls[0], { key: null, headers: { Range: 'bytes=-10' } });
		expect(tail.bytes).toEqual(video.bytes.subarray(video.bytes.length - 10));
		const beyond = await http.request('GET', job.resultUrls[0], { key: null, headers: { Range: `bytes=${video.bytes.length}-` } });
		expect(beyond.status).toBe(416);
		const head = await http.request('HEAD', job.resultUrls[0], { key: null });
		expect(head.status).toBe(200);
		expect(head.bytes.length).toBe(0);
	});

	it('animates an uploaded image: ticket, PUT without a key, file served back, job done', async () => {
		const ticket = await http.request('POST', '/api/upload', { body: { filename: 'frame.png', contentType: 'image/png', size: PNG.length } });
		expect(ticket.status).toBe(200);
		const { uploadUrl, fileUrl, headers } = ticket.body as { uploadUrl: string; fileUrl: string; headers: Record<string, string> };
		const put = await http.request('PUT', uploadUrl, { body: PNG, headers, key: null });
		expect(put.status).toBe(200);
		const file = await http.request('GET', fileUrl, { key: null });
		expect(file.bytes).toEqual(PNG);
		const created = await http.generate({ prompt: 'Make the pixel dance', imageUrl: fileUrl, duration: 5 });
		const done = await untilFinished((created.body as { id: string }).id);
		expect(done.body).toMatchObject({ status: 'done' });
		const admin = (await (await fetch(`${sandbox.url}/__sandbox/jobs`)).json()) as Array<{ id: string; request: { imageUrl?: string } }>;
		expect(admin.find((j) => j.id === (created.body as { id: string }).id)?.request.imageUrl).toBe(fileUrl);
	});

	it('transforms footage (video to video)', async () => {
		const created = await http.generate({ prompt: 'As a watercolour', videoUrl: 'https://storage.example.com/clip.mp4', resolution: '4K', duration: 4 });
		expect(created.body).toMatchObject({ creditsQueued: 100 });
		expect((await untilFinished((created.body as { id: string }).id)).body).toMatchObject({ status: 'done', creditsUsed: 100 });
	});

	it('fails a job whose sandbox source was never uploaded, releasing its credits', async () => {
		const before = sandbox.accounts.accounts.get('acct_premium')?.balance;
		const created = await http.generate({ prompt: 'x', imageUrl: `${sandbox.url}/files/upl_missing/a.png` });
		const failed = await untilFinished((created.body as { id: string }).id);
		expect(failed.body).toMatchObject({ status: 'failed', errorCode: 'input_fetch_failed', error: expect.any(String) });
		expect(sandbox.accounts.accounts.get('acct_premium')?.balance).toBe(before);
		expect(sandbox.accounts.accounts.get('acct_premium')?.reserved).toBe(0);
	});

	it.each([
		['job-fails-content-policy', 'content_policy'],
		['job-fails-internal', 'internal'],
	])('fails a job by scenario %s', async (scenario, errorCode) => {
		const created = await http.generate({ prompt: `p [sandbox:${scenario}]` });
		const failed = await untilFinished((created.body as { id: string }).id);
		expect(failed.body).toMatchObject({ status: 'failed', errorCode, creditsUsed: 0 });
	});

	it('keeps a job of scenario job-fails-timeout rendering for an hour, then fails it with timeout', async () => {
		const created = await http.generate({ prompt: 'stuck [sandbox:job-fails-timeout]', resolution: '720P', duration: 4 });
		const id = (created.body as { id: string }).id;
		sandbox.clock.advance(120_000);
		expect((await http.job(id)).body).toMatchObject({ status: expect.stringMatching(/queued|processing/) });
		sandbox.clock.advance(3_600_000);
		const failed = await untilFinished(id);
		expect(failed.body).toMatchObject({ status: 'failed', errorCode: 'timeout', creditsUsed: 0 });
	});

	it('refuses uploads over the size limit, with a wrong type, a bad signature or after expiry', async () => {
		const tooBig = await http.request('POST', '/api/upload', { body: { filename: 'a.png', contentType: 'image/png', size: sandbox.config.maxUploadBytes + 1 } });
		expect(tooBig.status).toBe(413);
		expect(tooBig.body).toMatchObject({ error: { code: 'file_too_large' } });
		const ticket = await http.request('POST', '/api/upload', { body: { filename: 'a.png', contentType: 'image/png', size: PNG.length } });
		const { uploadUrl } = ticket.body as { uploadUrl: string };
		expect((await http.request('PUT', uploadUrl, { body: PNG, headers: { 'Content-Type': 'image/jpeg' }, key: null })).status).toBe(403);
		expect((await http.request('PUT', uploadUrl.replace(/signature=[^&]+/, 'signature=forged'), { body: PNG, headers: { 'Content-Type': 'image/png' }, key: null })).status).toBe(403);
		sandbox.clock.advance(2 * 3_600_000);
		const expired = await http.request('PUT', uploadUrl, { body: PNG, headers: { 'Content-Type': 'image/png' }, key: null });
		expect(expired.status).toBe(403);
		expect(expired.body).toMatchObject({ error: { message: expect.stringContaining('expired') } });
	});
});
