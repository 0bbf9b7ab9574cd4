/* eslint-disable @n8n/community-nodes/no-restricted-imports -- the Activepieces piece: n8n's rules for community nodes do not apply to it */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Piece } from '@activepieces/pieces-framework';
import { startSandbox, type Sandbox } from '../../sandbox';
import { GENERATE_LIMITS, PLANS, TYPICAL_RENDER_SECONDS } from '../../core';
import { MAX_PRUNED_PER_STEP, RECORD_HOUR_MS, RECORD_KEPT_MS } from '../src/run/stepRecords';
import { EngineServer, installPiece, uninstallPiece, loadPiece, newFlowRun, runActionStep, type ActionStep, type FlowRun, type InstalledPiece } from './engine';

/**
 * The piece as Activepieces' engine runs it (./engine.ts): each run of a step in an engine
 * process of its own, loaded from its built package, its input processed and validated, its
 * context built for BEGIN or RESUME, the store, files and waitpoints on the server over HTTP,
 * against the real sandbox (10× faster than the service is 40× here).
 */
// Each step is an engine process of its own (a second or more to start, more on a loaded machine).
jest.setTimeout(120_000);

const SPEED = 40;
let sandbox: Sandbox;
let installed: InstalledPiece;
let piece: Piece;

beforeAll(async () => {
	sandbox = await startSandbox({ port: 0, speed: SPEED, insecureCallbacks: true });
	installed = installPiece();
	piece = loadPiece(installed);
});
afterAll(async () => {
	await sandbox.close();
	uninstallPiece(installed);
});

/** The connection as the engine resolves it for a step: a custom auth's value. */
const auth = () => ({ type: 'CUSTOM_AUTH', props: { apiKey: sandbox.keys.premium, baseUrl: sandbox.url, plan: 'premium' } });
/** Renders on the sandbox's sped-up clock: polling's first look is told so. */
const fast = { resolution: '720P', duration: 4, expectedSeconds: 1 };
const creates = () => sandbox.journal.filter((entry) => entry.path === '/api/v1/generate').length;

/** An instance whose public address is plain http and not loopback: Omni Video cannot call it back. */
const unreachableInstance = () => new EngineServer('http://activepieces.internal:8080/api/');

interface Step extends Omit<ActionStep, 'input' | 'stepName'> {
	stepName?: string;
	server?: EngineServer;
	run?: FlowRun;
}

/** Runs one step through the engine; its output, or the engine's failure message as an error. */
async function step(actionName: string, props: Record<string, unknown>, options: Omit<Step, 'actionName'> = {}): Promise<Record<string, unknown>> {
	const result = await runActionStep(installed, options.server ?? unreachableInstance(), options.run ?? newFlowRun(), {
		...options,
		actionName,
		stepName: options.stepName ?? 'step_1',
		input: { auth: auth(), ...props },
	});
	if (result.status === 'FAILED') throw new Error(result.errorMessage);
	return result.output as Record<string, unknown>;
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
		const metadata = piece.metadata();
		expect(Object.keys(metadata.actions).sort()).toEqual(['generate_video', 'get_job', 'upload_image']);
		expect(Object.keys(metadata.triggers)).toEqual(['job_completed']);
	});

	it("states the API's limits as core knows them (prompt, duration, resolutions, render time, plans)", () => {
		const { props } = piece.metadata().actions.generate_video;
		const { maxPromptCharacters, minDurationSeconds, maxDurationSeconds, resolutions } = GENERATE_LIMITS;
		expect(props.prompt.description).toContain(`up to ${maxPromptCharacters.toLocaleString('en-US')} characters`);
		expect(props.duration.description).toContain(`${minDurationSeconds} to ${maxDurationSeconds} seconds`);
		expect((props.resolution as unknown as { options: { options: Array<{ value: string }> } }).options.options.map((option) => option.value)).toEqual([...resolutions]);
		expect(props.expectedSeconds.description).toContain(`${TYPICAL_RENDER_SECONDS.min} to ${TYPICAL_RENDER_SECONDS.max} s`);
		const plans = (piece.metadata().auth as unknown as { props: { plan: { options: { options: Array<{ label: string }> } } } }).props.plan.options.options;
		expect(plans.map((plan) => plan.label)).toEqual(
			[PLANS.pro, PLANS.premium].map((limits) => expect.stringContaining(`${limits.requestsPerMinute} requests a minute, ${limits.requestsPerHour} an hour, ${limits.concurrentJobs} jobs at once`)),
		);
	});

	it("the connection's validation proves the key with one request, and tells what is wrong", async () => {
		const validate = (props: Record<string, unknown>) => validateConnection({ type: 'CUSTOM_AUTH', props });
		const before = sandbox.journal.length;
		expect(await validate(auth().props)).toEqual({ valid: true });
		expect(sandbox.journal.length).toBe(before + 1);
		expect(await validate({ ...auth().props, apiKey: 'omni_wrong' })).toEqual({ valid: false, error: expect.stringMatching(/key/i) });
		expect(await validate({ ...auth().props, baseUrl: `${sandbox.url}/omni` })).toEqual({ valid: false, error: expect.stringMatching(/without a path/) });
		// The wrong plan is seen in X-RateLimit-Limit, docs/api.md's decision; the spec shows no such
		// header, and then the plan cannot be checked: the key alone is proven.
		for (const [service, verdict] of [
			['default', { valid: false, error: expect.stringMatching(/counts this key's requests as premium/) }],
			['spec', { valid: true }],
		] as const) {
			const reading = await startSandbox({ port: 0, service });
			try {
				const props = { apiKey: reading.keys.premium, baseUrl: reading.url, plan: 'pro' };
				expect(await validate(props)).toEqual(verdict);
				expect(await validate({ ...props, apiKey: 'omni_wrong' })).toEqual({ valid: false, error: expect.stringMatching(/key/i) });
			} finally {
				await reading.close();
			}
		}
	});

	it('a revoked key and an address where nothing answers are refused, each with what to do', async () => {
		const validate = (props: Record<string, unknown>) => validateConnection({ type: 'CUSTOM_AUTH', props });
		const revoked = await validate({ ...auth().props, apiKey: sandbox.keys.revoked });
		expect(revoked).toEqual({ valid: false, error: expect.stringMatching(/revoked/i) });
		const unreachable = await validate({ ...auth().props, baseUrl: await closedAddress() });
		expect(unreachable).toEqual({ valid: false, error: expect.stringMatching(/reach|connect/i) });
		expect(unreachable).not.toEqual(revoked);
	});
});

/** Saving a connection: the engine's auth validation calls the piece's validate with the connection's props. */
function validateConnection(value: { type: string; props: Record<string, unknown> }) {
	const pieceAuth = piece.auth as unknown as { validate: (params: { auth: unknown; server: { apiUrl: string; publicUrl: string } }) => Promise<unknown> };
	return pieceAuth.validate({ auth: value.props, server: { apiUrl: 'http://127.0.0.1:3000/api/', publicUrl: 'http://localhost:4200/api/' } });
}

describe('Generate Video', () => {
	/** An instance whose resume URLs the sandbox can reach (http on loopback, allowed for the local sandbox only). */
	const reachableInstance = () => new EngineServer();

	it('pauses on a waitpoint, and the callback to its resume URL runs the step again with RESUME: the video, two requests', async () => {
		const server = reachableInstance();
		const run = newFlowRun();
		const before = sandbox.journal.length;
		const props = { prompt: 'A paper boat in the rain', ...fast, includeVideoFile: true };
		const paused = await runActionStep(installed, server, run, { actionName: 'generate_video', stepName: 'generate', input: { auth: auth(), ...props } });
		expect(paused.status).toBe('PAUSED');
		expect(server.waitpoints).toEqual([expect.objectContaining({ id: 'wp_1', runId: run.id, stepName: 'generate' })]);
		expect(paused.output).toEqual(expect.objectContaining({ status: 'queued', waitedBy: 'callback', mode: 'text-to-video' }));
		const { jobId } = paused.output as { jobId: string };

		const payload = await server.nextResume(run.id);
		expect(payload?.body).toEqual(expect.objectContaining({ id: jobId, status: 'done' }));
		const done = await runActionStep(installed, server, run, { actionName: 'generate_video', stepName: 'generate', input: { auth: auth(), ...props }, resumePayload: payload });
		expect(done.status).toBe('SUCCEEDED');
		expect(done.output).toEqual(expect.objectContaining({ jobId, status: 'done', waitedBy: 'callback', videoUrl: expect.stringMatching(/output\.mp4$/), videoFile: expect.any(String) }));
		expect(server.files).toEqual([expect.objectContaining({ fileName: `omni-video-${jobId}.mp4`, stepName: 'generate' })]);
		expect(server.files[0].data.subarray(4, 8).toString('latin1')).toBe('ftyp');
		// The create and the resumed step's lookup; nothing while paused. The flow's store keeps the
		// step's record of its job (for the step run again in this run) and the lists that prune it.
		expect(sandbox.journal.slice(before).map((entry) => entry.path)).toEqual(['/api/v1/generate', `/api/v1/jobs/${jobId}`]);
		const record = `flow_${run.flowId}/omni-video:${String((done.output as { idempotencyKey: string }).idempotencyKey)}`;
		const hour = Math.floor(Date.now() / RECORD_HOUR_MS);
		expect(new Map(server.storeEntries)).toEqual(
			new Map<string, unknown>([
				[record, expect.objectContaining({ jobId, waitpointId: 'wp_1', sentAtMs: expect.any(Number) })],
				[`flow_${run.flowId}/omni-video:records:${hour}`, [record.slice(`flow_${run.flowId}/`.length)]],
				[`flow_${run.flowId}/omni-video:records:hours`, [hour]],
			]),
		);
	});

	it("Retry on Failure runs the failed step again in the same run: the job it made is picked up, never a second one", async () => {
		const server = reachableInstance();
		const run = newFlowRun();
		const createsBefore = creates();
		// The first attempt gives up polling long before a 4K job can end, and fails the step.
		const result = await runActionStep(installed, server, run, {
			actionName: 'generate_video',
			stepName: 'generate',
			input: { auth: auth(), prompt: 'A lighthouse at dusk', resolution: '4K', duration: 10, wait: 'poll', timeoutSeconds: 0.3, expectedSeconds: 0.1 },
			retryOnFailure: { retryIntervalMs: 400 },
		});
		expect(result.attempts).toBeGreaterThan(1);
		expect(result).toEqual(expect.objectContaining({ status: 'SUCCEEDED', output: expect.objectContaining({ status: 'done', waitedBy: 'polling' }) }));
		expect(creates()).toBe(createsBefore + 1);
		expect(server.waitpoints).toEqual([]);
	});

	it('a step run again in the same run (the run retried from the failed step) makes no second job, and never pauses for a job that has ended', async () => {
		const server = reachableInstance();
		const run = newFlowRun();
		const props = { prompt: 'A harbour at dawn', ...fast };
		const first = await step('generate_video', props, { server, run, stepName: 'generate' });
		const createsBefore = creates();
		await server.nextResume(run.id);
		// The run is retried from this step: it begins again, it is not resumed.
		run.steps.delete('generate');
		const again = await step('generate_video', props, { server, run, stepName: 'generate' });
		expect(again).toEqual(expect.objectContaining({ jobId: first.jobId, status: 'done', idempotencyKey: first.idempotencyKey, waitedBy: 'polling' }));
		expect(server.waitpoints.map((waitpoint) => waitpoint.id)).toEqual(['wp_1']);
		expect(creates()).toBe(createsBefore);
	});

	it("a store that fails to keep the job's record after the create fails the step naming the job; the step run again sends no create", async () => {
		const server = unreachableInstance();
		const run = newFlowRun();
		const props = { prompt: 'A fox in snow', ...fast, wait: 'none' };
		server.refuseStoreWrite = (_key, value) => typeof value === 'object' && value !== null && 'jobId' in value;
		const createsBefore = creates();
		const error = await failure(step('generate_video', props, { server, run, stepName: 'generate' }));
		expect(error.message).toMatch(/made job \S+, but the flow's store did not keep/);
		expect(error.message).toContain('Get Job');
		server.refuseStoreWrite = undefined;
		run.steps.delete('generate');
		const again = await failure(step('generate_video', props, { server, run, stepName: 'generate' }));
		expect(again.message).toContain('may have created this step\'s job');
		expect(creates()).toBe(createsBefore + 1);
	});

	it('the same input in another run is a new job; the same run and step always have the same idempotency key', async () => {
		const props = { prompt: 'A kite over dunes', ...fast, wait: 'none' };
		const [a, b] = [newFlowRun(), newFlowRun()];
		// One instance (one flow's store) runs them all, as the same run's steps always are.
		const server = unreachableInstance();
		const first = await step('generate_video', props, { run: a, server });
		const again = await step('generate_video', props, { run: a, server });
		const other = await step('generate_video', props, { run: b, server });
		expect(again.idempotencyKey).toBe(first.idempotencyKey);
		expect(again.jobId).toBe(first.jobId);
		expect(other.jobId).not.toBe(first.jobId);
		expect(first).toEqual(expect.objectContaining({ status: 'queued' }));
		expect(first.waitedBy).toBeUndefined();
	});

	it('a step that succeeded, run again in the same run (the run begun again with its id), gets its job from the flow\'s store: no second create on any reading', async () => {
		const server = unreachableInstance();
		const run = newFlowRun();
		const props = { prompt: 'A heron in reeds', ...fast, wait: 'poll' };
		const first = await step('generate_video', props, { server, run, stepName: 'generate' });
		expect(first).toEqual(expect.objectContaining({ status: 'done' }));
		const before = sandbox.journal.length;
		run.steps.delete('generate');
		const again = await step('generate_video', props, { server, run, stepName: 'generate' });
		expect(again).toEqual(expect.objectContaining({ jobId: first.jobId, status: 'done', idempotencyKey: first.idempotencyKey }));
		// One lookup of the job the store names; no create (on --service spec the key would not have saved it).
		expect(sandbox.journal.slice(before).map((entry) => entry.path)).toEqual([`/api/v1/jobs/${String(first.jobId)}`]);
	});

	it("records older than a day are deleted, at most 50 by a step, so the flow's store holds about a day of them", async () => {
		const server = unreachableInstance();
		const run = newFlowRun('flow_pruned');
		const flowKey = (name: string) => `flow_${run.flowId}/${name}`;
		const pastHour = Math.floor((Date.now() - RECORD_KEPT_MS) / RECORD_HOUR_MS) - 2;
		const recentHour = Math.floor(Date.now() / RECORD_HOUR_MS) - 20;
		const old = Array.from({ length: MAX_PRUNED_PER_STEP + 10 }, (_, index) => `omni-video:idem_old_${index}`);
		for (const key of old) server.storeEntries.set(flowKey(key), { jobId: 'job_old', sentAtMs: pastHour * RECORD_HOUR_MS });
		server.storeEntries.set(flowKey('omni-video:idem_recent'), { jobId: 'job_recent', sentAtMs: recentHour * RECORD_HOUR_MS });
		server.storeEntries.set(flowKey(`omni-video:records:${pastHour}`), old);
		server.storeEntries.set(flowKey(`omni-video:records:${recentHour}`), ['omni-video:idem_recent']);
		server.storeEntries.set(flowKey('omni-video:records:hours'), [pastHour, recentHour]);
		const props = { prompt: 'A slow tide', ...fast, wait: 'none' };

		await step('generate_video', props, { server, run, stepName: 'step_1' });
		const left = old.filter((key) => server.storeEntries.has(flowKey(key)));
		expect(left).toEqual(old.slice(MAX_PRUNED_PER_STEP));
		expect(server.storeEntries.get(flowKey(`omni-video:records:${pastHour}`))).toEqual(left);

		await step('generate_video', props, { server, run, stepName: 'step_2' });
		const hour = Math.floor(Date.now() / RECORD_HOUR_MS);
		expect(old.filter((key) => server.storeEntries.has(flowKey(key)))).toEqual([]);
		expect(server.storeEntries.has(flowKey(`omni-video:records:${pastHour}`))).toBe(false);
		// A record within its day stays, and so do the two new ones.
		expect(server.storeEntries.get(flowKey('omni-video:idem_recent'))).toEqual(expect.objectContaining({ jobId: 'job_recent' }));
		expect(server.storeEntries.get(flowKey('omni-video:records:hours'))).toEqual([recentHour, hour]);
		expect(server.storeEntries.get(flowKey(`omni-video:records:${hour}`))).toHaveLength(2);
	});

	it('polls when this instance cannot be called back over https:// (plain http, as behind NAT): no waitpoint, no callback URL', async () => {
		for (const publicUrl of ['http://activepieces.internal:8080/api/', 'http://203.0.113.7/api/']) {
			const server = new EngineServer(publicUrl);
			const before = sandbox.journal.length;
			const done = await step('generate_video', { prompt: 'A snail on a leaf', ...fast }, { server });
			expect(done).toEqual(expect.objectContaining({ status: 'done', waitedBy: 'polling' }));
			expect(server.waitpoints).toEqual([]);
			const job = sandbox.jobs.all.get(String(done.jobId));
			expect(job?.body).toEqual(expect.objectContaining({ prompt: 'A snail on a leaf' }));
			expect(job?.body.callbackUrl).toBeUndefined();
			// The create and the looks of polling, nothing refused.
			expect(sandbox.journal.slice(before).filter((entry) => Number(entry.status) >= 400)).toEqual([]);
		}
	});

	it("testing the step in the builder polls instead of pausing (the action's test)", async () => {
		const server = reachableInstance();
		const done = await step('generate_video', { prompt: 'A paper plane', ...fast }, { server, testStep: true });
		expect(done).toEqual(expect.objectContaining({ status: 'done', waitedBy: 'polling' }));
		expect(server.waitpoints).toEqual([]);
	});

	it('polling stays inside the run cap of 600 s: a longer timeout is cut, and a timeout names the job for Get Job', async () => {
		const { pollTimeoutMs, MAX_POLL_MS } = await import('../src/run/pollBudget');
		expect(MAX_POLL_MS).toBeLessThan(600_000);
		expect([pollTimeoutMs(3600), pollTimeoutMs(undefined), pollTimeoutMs(30)]).toEqual([MAX_POLL_MS, MAX_POLL_MS, 30_000]);
		const error = await failure(step('generate_video', { prompt: 'A slow glacier', resolution: '4K', duration: 10, wait: 'poll', timeoutSeconds: 0.5, expectedSeconds: 0.2 }));
		expect(error.message).toMatch(/Omni Video job job_[\w-]+ is still .* after 1 s of waiting.*Get Job/);
	});

	it('a failed job fails the step with the reason, what to do and the job id', async () => {
		const error = await failure(step('generate_video', { prompt: 'Rain on glass [sandbox:job-fails-content-policy]', ...fast, wait: 'poll' }));
		expect(error.message).toMatch(/Omni Video job job_[\w-]+ failed: .*content policy/i);
	});

	it('a step whose job failed, run again in the same run, fails with that job again (no second job); another run makes a new one', async () => {
		const props = { prompt: 'Sleet on a window [sandbox:job-fails-content-policy]', ...fast, wait: 'poll' };
		const server = unreachableInstance();
		const run = newFlowRun();
		const createsBefore = creates();
		const first = await failure(step('generate_video', props, { run, server }));
		const jobId = /job (job_[\w-]+) failed/.exec(first.message)?.[1];
		expect(jobId).toBeDefined();
		// A retry from the failed step: the same run and step, the same input.
		const again = await failure(step('generate_video', props, { run, server }));
		expect(again.message).toContain(`job ${jobId} failed`);
		expect(creates()).toBe(createsBefore + 1);
		const other = await failure(step('generate_video', props, { run: newFlowRun(), server }));
		expect(other.message).not.toContain(String(jobId));
		expect(creates()).toBe(createsBefore + 2);
	});

	it('bad input fails before any request, naming the field and the value', async () => {
		const before = sandbox.journal.length;
		const error = await failure(step('generate_video', { prompt: 'A fox', duration: 42 }));
		expect(error.message).toMatch(/Duration must be between 4 and 10 seconds \(got 42\)/);
		expect(sandbox.journal.length).toBe(before);
	});

	it("the engine refuses input of the wrong type before the step runs (its own validation), with no request", async () => {
		const before = sandbox.journal.length;
		const error = await failure(step('generate_video', { prompt: 'A fox', duration: 'eight' }));
		expect(JSON.parse(error.message)).toEqual({ duration: ['Expected number, received: eight'] });
		expect(sandbox.journal.length).toBe(before);
	});
});

describe('Get Job and Upload Image', () => {
	it('Get Job reads a job, with its video as a file of the run when asked; an unknown id names the id', async () => {
		const server = unreachableInstance();
		const run = newFlowRun();
		const done = await step('generate_video', { prompt: 'A red fox in snow', ...fast, wait: 'poll' }, { server, run });
		const got = await step('get_job', { jobId: done.jobId, includeVideoFile: true }, { server, run, stepName: 'step_2' });
		expect(got).toEqual(expect.objectContaining({ jobId: done.jobId, status: 'done', videoFile: server.files[0].url }));
		const error = await failure(step('get_job', { jobId: 'job_nothing_here' }, { server, run, stepName: 'step_3' }));
		expect(error.message).toMatch(/job_nothing_here/);
	});

	it("a video larger than a run's file may be (10 MB) stays a link, with the reason in the output", async () => {
		const server = unreachableInstance();
		const done = await step('generate_video', { prompt: 'A long pan [sandbox:large-output]', ...fast, wait: 'poll', includeVideoFile: true }, { server });
		expect(sandbox.config.largeFileBytes).toBeGreaterThan(10 * 1024 * 1024);
		expect(done).toEqual(expect.objectContaining({ status: 'done', videoUrl: expect.stringMatching(/output\.mp4$/), videoFileSkipped: expect.stringMatching(new RegExp(`job ${String(done.jobId)} is 64\\.0 MB, over the 10 MB`)) }));
		expect(done.videoFile).toBeUndefined();
		expect(server.files).toEqual([]);
	});

	it('Upload Image sends a file (given as the engine gets it: a data URI; its type read from the bytes) and its File URL animates in Generate Video', async () => {
		// A 1×1 PNG.
		const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
		const run = newFlowRun();
		const uploaded = await step('upload_image', { image: `data:application/octet-stream;base64,${png}` }, { run });
		expect(uploaded).toEqual(expect.objectContaining({ fileUrl: expect.stringMatching(/^http/), contentType: 'image/png', size: Buffer.from(png, 'base64').length }));
		const done = await step('generate_video', { prompt: 'Bring it to life', ...fast, imageUrl: uploaded.fileUrl, wait: 'poll' }, { run, stepName: 'step_2' });
		expect(done).toEqual(expect.objectContaining({ status: 'done', mode: 'image-to-video' }));
		const error = await failure(step('upload_image', { image: `data:text/plain;base64,${Buffer.from('plain text').toString('base64')}` }, { run, stepName: 'step_3' }));
		expect(error.message).toMatch(/type could not be recognised/);
	});
});
