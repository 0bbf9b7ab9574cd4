/* eslint-disable @n8n/community-nodes/no-restricted-imports -- the Activepieces piece: n8n's rules for community nodes do not apply to it */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApFile } from '@activepieces/pieces-framework';
import { startSandbox, type Sandbox } from '../../sandbox';
import { GENERATE_LIMITS, PLANS, TYPICAL_RENDER_SECONDS } from '../../core';
import { omniVideo, omniVideoAuth } from '../src';
import { generateVideo } from '../src/actions/generate-video';
import { getJob } from '../src/actions/get-job';
import { uploadImage } from '../src/actions/upload-image';
import { actionContext, newRun, startResumeServer, type Run, type StepOptions } from './harness';

/** The piece's actions on the framework's context against the real sandbox (10× faster than the service is 40× here). */
const SPEED = 40;
let sandbox: Sandbox;
let resume: Awaited<ReturnType<typeof startResumeServer>>;

beforeAll(async () => {
	sandbox = await startSandbox({ port: 0, speed: SPEED, insecureCallbacks: true });
	resume = await startResumeServer();
});
afterAll(async () => {
	await resume.close();
	await sandbox.close();
});

const auth = () => ({ apiKey: sandbox.keys.premium, baseUrl: sandbox.url, plan: 'premium' });
/** Renders on the sandbox's sped-up clock: polling's first look is told so. */
const fast = { resolution: '720P', duration: 4, expectedSeconds: 1 };
const creates = () => sandbox.journal.filter((entry) => entry.path === '/api/v1/generate').length;

function step(action: { run: (ctx: never) => Promise<unknown> }, props: Record<string, unknown>, options: StepOptions): Promise<Record<string, unknown>> {
	return action.run(actionContext(props, options) as never) as Promise<Record<string, unknown>>;
}

async function failure(work: Promise<unknown>): Promise<Error> {
	return work.then(
		() => {
			throw new Error('expected the step to fail');
		},
		(error: Error) => error,
	);
}

/** An http:// address on loopback where nothing listens any more. */
async function closedAddress(): Promise<string> {
	const server = http.createServer();
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
	const { port } = server.address() as AddressInfo;
	await new Promise<void>((resolve) => server.close(() => resolve()));
	return `http://127.0.0.1:${port}`;
}

describe('the piece', () => {
	it('declares its actions and trigger under Activepieces names', () => {
		const metadata = omniVideo.metadata();
		expect(Object.keys(metadata.actions).sort()).toEqual(['generate_video', 'get_job', 'upload_image']);
		expect(Object.keys(metadata.triggers)).toEqual(['job_completed']);
	});

	it("states the API's limits as core knows them (prompt, duration, resolutions, render time, plans)", () => {
		const { props } = omniVideo.metadata().actions.generate_video;
		const { maxPromptCharacters, minDurationSeconds, maxDurationSeconds, resolutions } = GENERATE_LIMITS;
		expect(props.prompt.description).toContain(`up to ${maxPromptCharacters.toLocaleString('en-US')} characters`);
		expect(props.duration.description).toContain(`${minDurationSeconds} to ${maxDurationSeconds} seconds`);
		expect((props.resolution as unknown as { options: { options: Array<{ value: string }> } }).options.options.map((option) => option.value)).toEqual([...resolutions]);
		expect(props.expectedSeconds.description).toContain(`${TYPICAL_RENDER_SECONDS.min} to ${TYPICAL_RENDER_SECONDS.max} s`);
		const plans = (omniVideo.metadata().auth as unknown as { props: { plan: { options: { options: Array<{ label: string }> } } } }).props.plan.options.options;
		expect(plans.map((plan) => plan.label)).toEqual(
			[PLANS.pro, PLANS.premium].map((limits) => expect.stringContaining(`${limits.requestsPerMinute} requests a minute, ${limits.requestsPerHour} an hour, ${limits.concurrentJobs} jobs at once`)),
		);
	});

	it("the connection's validation proves the key with one request, and tells what is wrong", async () => {
		const validate = (props: Record<string, unknown>) => omniVideoAuth.validate!({ auth: props as never, server: { apiUrl: '', publicUrl: '' } });
		const before = sandbox.journal.length;
		expect(await validate(auth())).toEqual({ valid: true });
		expect(sandbox.journal.length).toBe(before + 1);
		expect(await validate({ ...auth(), apiKey: 'omni_wrong' })).toEqual({ valid: false, error: expect.stringMatching(/key/i) });
		expect(await validate({ ...auth(), baseUrl: `${sandbox.url}/omni` })).toEqual({ valid: false, error: expect.stringMatching(/without a path/) });
		expect(await validate({ ...auth(), plan: 'pro' })).toEqual({ valid: false, error: expect.stringMatching(/counts this key's requests as premium/) });
	});

	it('a revoked key and an address where nothing answers are refused, each with what to do', async () => {
		const validate = (props: Record<string, unknown>) => omniVideoAuth.validate!({ auth: props as never, server: { apiUrl: '', publicUrl: '' } });
		const revoked = await validate({ ...auth(), apiKey: sandbox.keys.revoked });
		expect(revoked).toEqual({ valid: false, error: expect.stringMatching(/revoked/i) });
		const unreachable = await validate({ ...auth(), baseUrl: await closedAddress() });
		expect(unreachable).toEqual({ valid: false, error: expect.stringMatching(/reach|connect/i) });
		expect(unreachable).not.toEqual(revoked);
	});
});

describe('Generate Video', () => {
	/** A run on an instance whose resume URLs the sandbox can reach (http on loopback, allowed for the local sandbox only). */
	const reachable = (run: Run, stepName = 'generate'): StepOptions => ({ run, auth: auth(), publicUrl: resume.origin, stepName });

	it('pauses on a waitpoint, and the callback to its resume URL runs the step again with RESUME: the video, two requests', async () => {
		const run = newRun();
		const before = sandbox.journal.length;
		const paused = await step(generateVideo, { prompt: 'A paper boat in the rain', ...fast, includeVideoFile: true }, reachable(run));
		expect(run.waitedOn).toEqual(['wp_1']);
		expect(paused).toEqual(expect.objectContaining({ status: 'queued', waitedBy: 'callback', mode: 'text-to-video' }));

		const payload = await resume.waitFor(`/api/v1/flow-runs/${run.id}/waitpoints/wp_1`);
		expect(payload.body).toEqual(expect.objectContaining({ id: paused.jobId, status: 'done' }));
		const done = await step(generateVideo, { prompt: 'A paper boat in the rain', ...fast, includeVideoFile: true }, { ...reachable(run), resumePayload: payload });
		expect(done).toEqual(expect.objectContaining({ jobId: paused.jobId, status: 'done', waitedBy: 'callback', videoUrl: expect.stringMatching(/output\.mp4$/), videoFile: expect.any(String) }));
		expect(run.files).toEqual([{ fileName: `omni-video-${paused.jobId}.mp4`, data: expect.any(Buffer) }]);
		expect(run.files[0].data.subarray(4, 8).toString('latin1')).toBe('ftyp');
		// The create and the resumed step's lookup; nothing while paused. The run's store is left clean.
		expect(sandbox.journal.slice(before).map((entry) => entry.path)).toEqual(['/api/v1/generate', `/api/v1/jobs/${paused.jobId}`]);
		expect(run.store.values.size).toBe(0);
	});

	it("a retry of the step (Activepieces' Retry on Failure) makes no second job, and never pauses for a job that has ended", async () => {
		const run = newRun();
		const props = { prompt: 'A lighthouse at dusk', ...fast };
		const first = await step(generateVideo, props, reachable(run));
		const createsBefore = creates();
		await resume.waitFor(`/api/v1/flow-runs/${run.id}/waitpoints/wp_1`);
		const retried = await step(generateVideo, props, reachable(run));
		expect(retried).toEqual(expect.objectContaining({ jobId: first.jobId, status: 'done', idempotencyKey: first.idempotencyKey, waitedBy: 'polling' }));
		expect(run.waitedOn).toEqual(['wp_1']);
		expect(run.waitpoints).toEqual(['wp_1']);
		expect(creates()).toBe(createsBefore);
	});

	it('the same input in another run is a new job; the same run and step always have the same idempotency key', async () => {
		const props = { prompt: 'A kite over dunes', ...fast, wait: 'none' };
		const [a, b] = [newRun(), newRun()];
		const first = await step(generateVideo, props, reachable(a));
		const again = await step(generateVideo, props, reachable(a));
		const other = await step(generateVideo, props, reachable(b));
		expect(again.idempotencyKey).toBe(first.idempotencyKey);
		expect(again.jobId).toBe(first.jobId);
		expect(other.jobId).not.toBe(first.jobId);
		expect(first).toEqual(expect.objectContaining({ status: 'queued' }));
		expect(first.waitedBy).toBeUndefined();
	});

	it('polls when this instance cannot be called back over https:// (plain http, as behind NAT): no waitpoint, no callback URL', async () => {
		for (const publicUrl of ['http://activepieces.internal:8080', 'http://203.0.113.7']) {
			const run = newRun();
			const before = sandbox.journal.length;
			const done = await step(generateVideo, { prompt: 'A snail on a leaf', ...fast }, { run, auth: auth(), publicUrl });
			expect(done).toEqual(expect.objectContaining({ status: 'done', waitedBy: 'polling' }));
			expect(run.waitpoints).toEqual([]);
			const job = sandbox.jobs.all.get(String(done.jobId));
			expect(job?.body).toEqual(expect.objectContaining({ prompt: 'A snail on a leaf' }));
			expect(job?.body.callbackUrl).toBeUndefined();
			// The create and the looks of polling, nothing refused.
			expect(sandbox.journal.slice(before).filter((entry) => Number(entry.status) >= 400)).toEqual([]);
		}
	});

	it('polling stays inside the run cap of 600 s: a longer timeout is cut, and a timeout names the job for Get Job', async () => {
		const { pollTimeoutMs, MAX_POLL_MS } = await import('../src/actions/generate-video');
		expect(MAX_POLL_MS).toBeLessThan(600_000);
		expect([pollTimeoutMs(3600), pollTimeoutMs(undefined), pollTimeoutMs(30)]).toEqual([MAX_POLL_MS, MAX_POLL_MS, 30_000]);
		const error = await failure(step(generateVideo, { prompt: 'A slow glacier', resolution: '4K', duration: 10, wait: 'poll', timeoutSeconds: 0.5, expectedSeconds: 0.2 }, { run: newRun(), auth: auth() }));
		expect(error.message).toMatch(/Omni Video job job_[\w-]+ is still .* after 1 s of waiting.*Get Job/);
	});

	it('a failed job fails the step with the reason, what to do and the job id', async () => {
		const error = await failure(step(generateVideo, { prompt: 'Rain on glass [sandbox:job-fails-content-policy]', ...fast, wait: 'poll' }, { run: newRun(), auth: auth() }));
		expect(error.message).toMatch(/Omni Video job job_[\w-]+ failed: .*content policy/i);
	});

	it('bad input fails before any request, naming the field and the value', async () => {
		const before = sandbox.journal.length;
		const error = await failure(step(generateVideo, { prompt: 'A fox', duration: 42 }, { run: newRun(), auth: auth() }));
		expect(error.message).toMatch(/Duration must be between 4 and 10 seconds \(got 42\)/);
		expect(sandbox.journal.length).toBe(before);
	});
});

describe('Get Job and Upload Image', () => {
	it('Get Job reads a job, with its video as a file of the run when asked; an unknown id names the id', async () => {
		const run = newRun();
		const done = await step(generateVideo, { prompt: 'A red fox in snow', ...fast, wait: 'poll' }, { run, auth: auth() });
		const got = await step(getJob, { jobId: done.jobId, includeVideoFile: true }, { run, auth: auth() });
		expect(got).toEqual(expect.objectContaining({ jobId: done.jobId, status: 'done', videoFile: expect.any(String) }));
		const error = await failure(step(getJob, { jobId: 'job_nothing_here' }, { run, auth: auth() }));
		expect(error.message).toMatch(/job_nothing_here/);
	});

	it("a video larger than a run's file may be (10 MB) stays a link, with the reason in the output", async () => {
		const run = newRun();
		const done = await step(generateVideo, { prompt: 'A long pan [sandbox:large-output]', ...fast, wait: 'poll', includeVideoFile: true }, { run, auth: auth() });
		expect(sandbox.config.largeFileBytes).toBeGreaterThan(10 * 1024 * 1024);
		expect(done).toEqual(expect.objectContaining({ status: 'done', videoUrl: expect.stringMatching(/output\.mp4$/), videoFileSkipped: expect.stringMatching(new RegExp(`job ${done.jobId} is 64\\.0 MB, over the 10 MB`)) }));
		expect(done.videoFile).toBeUndefined();
		expect(run.files).toEqual([]);
	});

	it('Upload Image sends a file (its type read from the bytes) and its File URL animates in Generate Video', async () => {
		// A 1×1 PNG.
		const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
		const run = newRun();
		const uploaded = await step(uploadImage, { image: new ApFile('photo.bin', png, 'bin') }, { run, auth: auth() });
		expect(uploaded).toEqual(expect.objectContaining({ fileUrl: expect.stringMatching(/^http/), contentType: 'image/png', size: png.length }));
		const done = await step(generateVideo, { prompt: 'Bring it to life', ...fast, imageUrl: uploaded.fileUrl, wait: 'poll' }, { run, auth: auth() });
		expect(done).toEqual(expect.objectContaining({ status: 'done', mode: 'image-to-video' }));
		const error = await failure(step(uploadImage, { image: new ApFile('notes.txt', Buffer.from('plain text')) }, { run, auth: auth() }));
		expect(error.message).toMatch(/type could not be recognised/);
	});
});
