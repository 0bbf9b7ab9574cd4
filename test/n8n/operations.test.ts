/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code, never shipped */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { INodeExecutionData, INodeParameters } from 'n8n-workflow';
import { startSandbox, type Sandbox } from '../../sandbox';
import { PLANS } from '../../core/types';
import { N8nTestInstance } from '../support/n8n/instance';
import { binaryBytes, chain, workflowOf } from '../support/n8n/engine';
import { errorOf, itemsOf, omniVideoNode, outputOf, spedUpPlan } from '../support/n8n/workflows';

const SPEED = 40;
const SAMPLE_MP4 = readFileSync(join(__dirname, '../../sandbox/fixtures/sample.mp4'));
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 73, 72, 68, 82]);
/** At this speed a 1080P 8 s job (56 s) renders in 1.4 s: tell the node, as a user would. */
const FAST = { expectedRenderSeconds: 2 };

let sandbox: Sandbox;
let n8n: N8nTestInstance;

beforeAll(async () => {
	sandbox = await startSandbox({ port: 0, speed: SPEED, insecureCallbacks: true });
	n8n = await N8nTestInstance.start({
		omniVideoApi: { apiKey: sandbox.keys.premium, baseUrl: sandbox.url, ...spedUpPlan(PLANS.premium, SPEED) },
	});
});
afterAll(async () => {
	await n8n.stop();
	await sandbox.close();
});

async function runNode(parameters: INodeParameters, items: INodeExecutionData[] = [{ json: {} }], extra = {}) {
	const workflow = workflowOf([omniVideoNode('Omni Video', parameters, extra)], {});
	const execution = await n8n.execute(workflow, 'Omni Video', items);
	return await execution.finished;
}

function pngItem(fileName = 'frame.png', mimeType = 'image/png', bytes = PNG): INodeExecutionData {
	return { json: { row: 1 }, binary: { data: { data: bytes.toString('base64'), mimeType, fileName } } };
}

describe('Video → Generate', () => {
	it("Don't Wait returns the queued job with its id, credits and timestamps, paired with its item", async () => {
		const run = await runNode(
			{ resource: 'video', operation: 'generate', prompt: 'A paper boat on a rainy street', waitMode: 'dontWait', resolution: '720P', duration: 4 },
			itemsOf({ row: 'a' }),
		);
		expect(run.status).toBe('success');
		const [item] = outputOf(run, 'Omni Video');
		expect(item.json).toMatchObject({ status: 'queued', mode: 'text-to-video', videoUrl: null, creditsQueued: expect.any(Number) });
		expect(item.json.jobId).toMatch(/^job_/);
		// The create answer carries no timestamp: the node records when it submitted the job.
		expect(Date.parse(String(item.json.submittedAt))).toBeGreaterThan(Date.now() - 60_000);
		expect(item.pairedItem).toEqual({ item: 0 });
		expect(sandbox.jobs.all.get(String(item.json.jobId))?.body).toMatchObject({ resolution: '720P', duration: 4 });
	});

	it('Poll waits for the video and streams it into a binary field; URLs stay in the JSON', async () => {
		const run = await runNode({
			resource: 'video',
			operation: 'generate',
			prompt: 'A lighthouse at dawn',
			waitMode: 'poll',
			download: true,
			outputBinaryPropertyName: 'clip',
			options: FAST,
		});
		expect(run.status).toBe('success');
		const [item] = outputOf(run, 'Omni Video');
		expect(item.json).toMatchObject({ status: 'done', creditsUsed: expect.any(Number), completedAt: expect.any(String) });
		expect(String(item.json.videoUrl)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
		expect(item.binary?.clip).toMatchObject({ mimeType: 'video/mp4', fileName: `omni-video-${item.json.jobId}.mp4` });
		// Stored by n8n's binary data service as a file, not inlined in the item.
		expect(item.binary?.clip.id).toEqual(expect.any(String));
		expect((await binaryBytes(item.binary!.clip)).equals(SAMPLE_MP4)).toBe(true);
	});

	it('animates an image URL and transforms a video URL', async () => {
		const image = await runNode({
			resource: 'video', operation: 'generate', prompt: 'Make it move', source: 'imageUrl',
			imageUrl: 'https://files.example.com/frame.png', waitMode: 'dontWait',
		});
		expect(outputOf(image, 'Omni Video')[0].json).toMatchObject({ mode: 'image-to-video' });
		const video = await runNode({
			resource: 'video', operation: 'generate', prompt: 'As a watercolour', source: 'videoUrl',
			videoUrl: 'https://files.example.com/clip.mp4', waitMode: 'dontWait',
		});
		expect(outputOf(video, 'Omni Video')[0].json).toMatchObject({ mode: 'video-to-video' });
		const request = sandbox.jobs.all.get(String(outputOf(video, 'Omni Video')[0].json.jobId))?.body;
		expect(request).toMatchObject({ videoUrl: 'https://files.example.com/clip.mp4' });
	});

	it('uploads an input binary image first, then animates its file URL', async () => {
		const run = await runNode(
			{ resource: 'video', operation: 'generate', prompt: 'The frame comes alive', source: 'binaryImage', binaryPropertyName: 'data', waitMode: 'dontWait' },
			[pngItem()],
		);
		expect(run.status).toBe('success');
		const [item] = outputOf(run, 'Omni Video');
		expect(item.json.mode).toBe('image-to-video');
		const imageUrl = String(sandbox.jobs.all.get(String(item.json.jobId))?.body.imageUrl);
		expect(imageUrl.startsWith(sandbox.url)).toBe(true);
		expect(Buffer.from(await (await fetch(imageUrl)).arrayBuffer()).equals(PNG)).toBe(true);
	});

	it('refuses bad input before any request, naming the field', async () => {
		const before = sandbox.journal.length;
		const run = await runNode({ resource: 'video', operation: 'generate', prompt: 'x', duration: 42, waitMode: 'dontWait' });
		expect(run.status).toBe('error');
		expect(errorOf(run, 'Omni Video')?.message).toMatch(/duration/i);
		expect(sandbox.journal.length).toBe(before);
	});

	it('an answer larger than 1 MiB stops the run with a clear error naming the idempotency key, unread', async () => {
		const run = await runNode({ resource: 'video', operation: 'generate', prompt: 'A fox [sandbox:huge-answer]', waitMode: 'dontWait' });
		expect(run.status).toBe('error');
		const error = errorOf(run, 'Omni Video')!;
		expect(`${error.message} ${error.description}`).toMatch(/larger than expected/);
		expect(`${error.message} ${error.description}`).toMatch(/idempotency key \S+/);
	});

	it('a failed job stops the run with the reason, the job id and what to do', async () => {
		const run = await runNode({ resource: 'video', operation: 'generate', prompt: 'forbidden [sandbox:job-fails-content-policy]', waitMode: 'poll', options: FAST });
		expect(run.status).toBe('error');
		const error = errorOf(run, 'Omni Video')!;
		expect(error.message).toMatch(/failed/);
		expect(`${error.message} ${error.description}`).toMatch(/job_[\w-]+/);
		expect(`${error.message} ${error.description}`).toMatch(/content policy/i);
	});

	it("the error view says what to do once: the description does not repeat the message's hint", async () => {
		const run = await runNode({ resource: 'video', operation: 'generate', prompt: 'forbidden [sandbox:job-fails-content-policy]', waitMode: 'poll', options: FAST });
		const error = errorOf(run, 'Omni Video')!;
		const hint = 'Change the prompt or the source image so that it meets the content policy.';
		expect(error.message).toContain(hint);
		expect(error.description ?? '').not.toContain(hint);
		expect(error.description).toMatch(/^Job ID: job_[\w-]+/);
	});

	it('continue on fail turns each failure into an error item and keeps the rest', async () => {
		const run = await runNode(
			{ resource: 'video', operation: 'generate', prompt: '={{ $json.prompt }}', waitMode: 'poll', options: FAST },
			itemsOf({ prompt: 'A calm sea' }, { prompt: 'no [sandbox:job-fails-content-policy]' }, { prompt: '' }),
			{ onError: 'continueRegularOutput' },
		);
		expect(run.status).toBe('success');
		const [ok, failed, invalid] = outputOf(run, 'Omni Video');
		expect(ok.json).toMatchObject({ status: 'done' });
		expect(failed.json).toMatchObject({ error: expect.stringMatching(/failed/), details: { kind: 'job_failed', jobId: expect.stringMatching(/^job_/) } });
		expect(failed.pairedItem).toEqual({ item: 1 });
		expect(invalid.json).toMatchObject({ details: { kind: 'validation' } });
		expect(invalid.pairedItem).toEqual({ item: 2 });
	});
});

describe('Job → Get', () => {
	it('looks a job up by id and downloads its video', async () => {
		const created = await runNode({ resource: 'video', operation: 'generate', prompt: 'Later', waitMode: 'poll', options: FAST });
		const jobId = outputOf(created, 'Omni Video')[0].json.jobId;
		const run = await runNode({ resource: 'job', operation: 'get', jobId: String(jobId), download: true });
		const [item] = outputOf(run, 'Omni Video');
		expect(item.json).toMatchObject({ jobId, status: 'done' });
		expect((await binaryBytes(item.binary!.video)).equals(SAMPLE_MP4)).toBe(true);
	});

	it('an unknown job id is a clear error', async () => {
		const run = await runNode({ resource: 'job', operation: 'get', jobId: 'job_does_not_exist' });
		expect(run.status).toBe('error');
		expect(errorOf(run, 'Omni Video')?.message).toMatch(/job_does_not_exist|not found|no job/i);
	});
});

describe('Image → Upload', () => {
	it('returns a file URL that Generate takes as its image URL, in one workflow', async () => {
		const workflow = workflowOf(
			[
				omniVideoNode('Upload', { resource: 'image', operation: 'upload', binaryPropertyName: 'data' }),
				omniVideoNode('Generate', {
					resource: 'video', operation: 'generate', prompt: 'Animate it', source: 'imageUrl',
					imageUrl: '={{ $json.fileUrl }}', waitMode: 'poll', options: FAST,
				}),
			],
			chain('Upload', 'Generate'),
		);
		const run = await (await n8n.execute(workflow, 'Upload', [pngItem()])).finished;
		expect(run.status).toBe('success');
		const uploaded = outputOf(run, 'Upload')[0].json;
		expect(uploaded).toMatchObject({ fileUrl: expect.stringContaining(sandbox.url), contentType: 'image/png', size: PNG.length });
		expect(outputOf(run, 'Generate')[0].json).toMatchObject({ status: 'done', mode: 'image-to-video' });
		expect(sandbox.jobs.all.get(String(outputOf(run, 'Generate')[0].json.jobId))?.body.imageUrl).toBe(uploaded.fileUrl);
	});

	it("follows the storage host's 307 and 308 with the same bytes", async () => {
		const key = sandbox.accounts.find(sandbox.keys.premium)!;
		key.scenarios.push('upload-redirect');
		try {
			const run = await runNode({ resource: 'image', operation: 'upload', binaryPropertyName: 'data' }, [pngItem()]);
			expect(run.status).toBe('success');
			const fileUrl = String(outputOf(run, 'Omni Video')[0].json.fileUrl);
			expect(Buffer.from(await (await fetch(fileUrl)).arrayBuffer()).equals(PNG)).toBe(true);
		} finally {
			key.scenarios.pop();
		}
	});

	it('refuses a file that is not JPEG, PNG or WebP before uploading', async () => {
		const before = sandbox.journal.length;
		const run = await runNode({ resource: 'image', operation: 'upload', binaryPropertyName: 'data' }, [pngItem('notes.txt', 'text/plain', Buffer.from('hello'))]);
		expect(run.status).toBe('error');
		expect(errorOf(run, 'Omni Video')?.message).toMatch(/JPEG|PNG|WebP|image/i);
		expect(sandbox.journal.length).toBe(before);
	});
});

describe('credentials and account errors', () => {
	async function runWithKey(apiKey: string) {
		const original = { ...n8n.credentials.omniVideoApi };
		n8n.credentials.omniVideoApi = { ...original, apiKey };
		try {
			return await runNode({ resource: 'video', operation: 'generate', prompt: 'Costly', resolution: '4K', duration: 10, waitMode: 'dontWait' });
		} finally {
			n8n.credentials.omniVideoApi = original;
		}
	}

	it('sends the key as a bearer token through the credential (the sandbox accepts it)', async () => {
		const run = await runNode({ resource: 'video', operation: 'generate', prompt: 'Keyed', waitMode: 'dontWait' });
		expect(run.status).toBe('success');
		expect(sandbox.journal.at(-1)).toMatchObject({ method: 'POST', path: '/api/v1/generate', status: 202, key: expect.any(String) });
	});

	it('401: a bad key says to check the credential', async () => {
		const run = await runWithKey('omni_wrong');
		expect(run.status).toBe('error');
		const error = errorOf(run, 'Omni Video')!;
		expect(error.httpCode).toBe('401');
		expect(`${error.message} ${error.description}`).toMatch(/API key|credential/i);
		expect(JSON.stringify(run.data.resultData)).not.toContain('omni_wrong');
	});

	it('402: too few credits is an error about credits, not retried', async () => {
		const before = sandbox.journal.length;
		const run = await runWithKey(sandbox.keys.budget);
		expect(run.status).toBe('error');
		const error = errorOf(run, 'Omni Video')!;
		expect(error.httpCode).toBe('402');
		expect(`${error.message} ${error.description}`).toMatch(/credit/i);
		expect(sandbox.journal.slice(before).filter((entry) => entry.path === '/api/v1/generate')).toHaveLength(1);
	});
});
