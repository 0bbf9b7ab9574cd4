/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-restricted-globals -- the Activepieces piece: n8n's rules for community nodes do not apply to it */
import { startSandbox, type Sandbox } from '../../sandbox';
import { EngineServer, installPiece, uninstallPiece, newFlowRun, runActionStep, runStepThrough, type ActionStep, type EngineSettings, type InstalledPiece } from './engine';

/**
 * Generate Video where a real Activepieces instance differs from one step in one process: the run
 * killed at the flow timeout, the instance's own file limit, a step retried after its output
 * failed to be written, a resume that comes while the run is still RUNNING, callbacks that never
 * come, a service that refuses the callback URL, a create whose answer is lost, and the engine's
 * action-run mode for agents and MCP. Each on the service as docs/api.md reads it (`default`) and
 * on the strictest reading of the spec (`spec`: keys ignored, callbacks unsigned, sent once, none
 * for failed jobs), since promises about money and completion must hold on both. Both run here,
 * so `npm run test:spec` leaves this file out (jest.spec.config.js).
 */
jest.setTimeout(180_000);

const SPEED = 40;
let installed: InstalledPiece;
beforeAll(() => {
	installed = installPiece();
});
afterAll(() => uninstallPiece(installed));

const fast = { resolution: '720P', duration: 4, expectedSeconds: 1 };

describe.each(['default', 'spec'] as const)('on the %s reading of the service', (service) => {
	let sandbox: Sandbox;
	beforeAll(async () => {
		sandbox = await startSandbox({ port: 0, speed: SPEED, insecureCallbacks: true, service });
	});
	afterAll(async () => {
		await sandbox.close();
	});

	const auth = () => ({ type: 'CUSTOM_AUTH', props: { apiKey: sandbox.keys.premium, baseUrl: sandbox.url, plan: 'premium' } });
	const creates = () => sandbox.journal.filter((entry) => entry.path === '/api/v1/generate').length;
	const generate = (props: Record<string, unknown>, extra: Partial<ActionStep> = {}): ActionStep => ({ actionName: 'generate_video', stepName: 'generate', input: { auth: auth(), ...props }, ...extra });

	it("a run killed at the flow timeout never comes: Poll ends inside the run's time left, naming the job", async () => {
		// A job that renders for an hour; an instance whose flow timeout leaves Poll 3 s after its margin.
		const settings: EngineSettings = { flowTimeoutSeconds: 63 };
		const result = await runActionStep(installed, new EngineServer('http://activepieces.internal:8080/api/'), newFlowRun(), generate({ prompt: 'A glacier [sandbox:job-fails-timeout]', ...fast, wait: 'poll' }), settings);
		expect(result.status).toBe('FAILED');
		expect(result.errorMessage).toMatch(/Omni Video job job_[\w-]+ is still .* Get Job/);
	});

	it("a video over the instance's file limit (AP_MAX_FILE_SIZE_MB) stays a link with the reason; the step does not fail", async () => {
		const server = new EngineServer('http://activepieces.internal:8080/api/', 0.0001);
		const result = await runActionStep(installed, server, newFlowRun(), generate({ prompt: 'A small clip', ...fast, wait: 'poll', includeVideoFile: true }));
		expect(result).toEqual(expect.objectContaining({ status: 'SUCCEEDED', output: expect.objectContaining({ status: 'done', videoFileSkipped: expect.stringMatching(/over the 0\.0001 MB a run's file may hold/) }) }));
		expect(server.files).toEqual([]);
	});

	/** A run paused on its Generate Video, then resumed by the job's callback: the step about to run again with RESUME. */
	async function resumedRun(server: EngineServer, prompt: string) {
		const run = newFlowRun();
		const step = generate({ prompt, ...fast, includeVideoFile: true });
		const paused = await runActionStep(installed, server, run, step);
		expect(paused.status).toBe('PAUSED');
		const resumePayload = (await server.nextResume(run.id)) ?? undefined;
		return { run, step: { ...step, resumePayload }, jobId: (paused.output as { jobId: string }).jobId };
	}
	const storedAttempts = (server: EngineServer) => [...server.storeEntries.keys()].filter((key) => key.includes('omni-video:idem_'));

	it("the step's record outlives a failed file write: Retry on Failure after a failed file write gets the job already made", async () => {
		const server = new EngineServer(undefined, 10, SPEED);
		const before = creates();
		const { run, step, jobId } = await resumedRun(server, 'A lantern on a pier');
		server.failNextFileWrites = 1;
		const result = await runActionStep(installed, server, run, { ...step, retryOnFailure: { retryIntervalMs: 50 } });
		expect(result).toEqual(expect.objectContaining({ status: 'SUCCEEDED', attempts: 2, output: expect.objectContaining({ jobId, status: 'done', videoFile: expect.any(String) }) }));
		expect(creates()).toBe(before + 1);
		// The record stays (a day), naming the job: the step run again in this run gets it again.
		expect(storedAttempts(server).map((key) => server.storeEntries.get(key))).toEqual([expect.objectContaining({ jobId })]);
	});

	it("the step's record outlives a failed file write: a retry from the failed step gets the job already made", async () => {
		const server = new EngineServer(undefined, 10, SPEED);
		const before = creates();
		const { run, step, jobId } = await resumedRun(server, 'A lantern on a quay');
		server.failNextFileWrites = 1;
		expect(await runActionStep(installed, server, run, step)).toEqual(expect.objectContaining({ status: 'FAILED', errorMessage: expect.stringMatching(/file/i) }));
		// Retried from the failed step: it begins again, and finds its job in the flow's store.
		run.steps.delete('generate');
		const again = await runActionStep(installed, server, run, { ...step, resumePayload: undefined });
		expect(again).toEqual(expect.objectContaining({ status: 'SUCCEEDED', output: expect.objectContaining({ jobId, status: 'done', videoFile: expect.any(String) }) }));
		expect(creates()).toBe(before + 1);
		// The record stays (a day), naming the job: the step run again in this run gets it again.
		expect(storedAttempts(server).map((key) => server.storeEntries.get(key))).toEqual([expect.objectContaining({ jobId })]);
	});

	it('a callback that arrives while the run is still RUNNING is held by the server and resumes the run as soon as it pauses', async () => {
		const server = new EngineServer(undefined, 10, SPEED);
		const run = newFlowRun();
		const step = generate({ prompt: 'A quick flash', ...fast });
		const [paused, done] = await runStepThrough(installed, server, run, step, {
			// The engine process has answered PAUSED; the server records it only once the job's callback has come.
			beforeRunStatus: async () => {
				const deadline = Date.now() + 30_000;
				while (server.bufferedResumes === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
			},
		});
		expect(paused.status).toBe('PAUSED');
		expect(server.bufferedResumes).toBe(1);
		expect(done).toEqual(expect.objectContaining({ status: 'SUCCEEDED', output: expect.objectContaining({ status: 'done', waitedBy: 'callback' }) }));
	});

	it('a pause whose callback is lost still ends: the server resumes it after the expected end, and the step reads the job', async () => {
		const server = new EngineServer(undefined, 10, SPEED);
		server.loseResumes = true;
		const run = newFlowRun();
		const results = await runStepThrough(installed, server, run, generate({ prompt: 'A lost message', ...fast }));
		expect(results.map((result) => result.status)).toEqual(['PAUSED', 'SUCCEEDED']);
		expect(server.delayResumes).toBe(1);
		expect(results[1].output).toEqual(expect.objectContaining({ status: 'done', waitedBy: 'callback' }));
	});

	it('a failed job whose callback never comes (the spec sends none) ends the pause with its reason', async () => {
		const server = new EngineServer(undefined, 10, SPEED);
		server.loseResumes = true;
		const results = await runStepThrough(installed, server, newFlowRun(), generate({ prompt: 'Rain on glass [sandbox:job-fails-content-policy]', ...fast }));
		expect(results.map((result) => result.status)).toEqual(['PAUSED', 'FAILED']);
		expect(results[1].errorMessage).toMatch(/Omni Video job job_[\w-]+ failed: .*content policy/i);
	});

	it('a create whose answer is lost (500 after the job was made) is never sent again, by Retry on Failure or a retry from the step', async () => {
		const server = new EngineServer('http://activepieces.internal:8080/api/');
		const run = newFlowRun();
		const before = creates();
		const step = generate({ prompt: 'Paid once [sandbox:error-500-after-create]', ...fast, wait: 'poll' }, { retryOnFailure: { retryIntervalMs: 50 } });
		const result = await runActionStep(installed, server, run, step);
		expect(result).toEqual(expect.objectContaining({ status: 'FAILED', attempts: 4, errorMessage: expect.stringMatching(/may have created this step's job .* idempotency key idem_\w+.*not sent again/) }));
		run.steps.delete('generate');
		expect(await runActionStep(installed, server, run, step)).toEqual(expect.objectContaining({ status: 'FAILED' }));
		expect(creates()).toBe(before + 1);
	});

	it('as an agent or MCP tool (constant flow and run ids), each call makes its own job and polls it; the same prompt is not the same old job', async () => {
		const server = new EngineServer(undefined, 10, SPEED);
		const call = generate({ prompt: 'A tool-made video', ...fast }, { toolCall: true });
		const first = await runActionStep(installed, server, newFlowRun(), call);
		const second = await runActionStep(installed, server, newFlowRun(), call);
		for (const result of [first, second]) expect(result).toEqual(expect.objectContaining({ status: 'SUCCEEDED', output: expect.objectContaining({ status: 'done', waitedBy: 'polling' }) }));
		expect((first.output as { jobId: string }).jobId).not.toBe((second.output as { jobId: string }).jobId);
		expect(server.waitpoints).toEqual([]);
	});
});

describe.each(['default', 'spec'] as const)('a service that refuses the callback URL, on the %s reading', (service) => {
	let sandbox: Sandbox;
	beforeAll(async () => {
		// Without insecureCallbacks the sandbox takes only https:// callback URLs, as the service does.
		sandbox = await startSandbox({ port: 0, speed: SPEED, service });
	});
	afterAll(async () => {
		await sandbox.close();
	});

	it('the step polls instead of failing, and says why (as n8n does)', async () => {
		const server = new EngineServer();
		const result = await runActionStep(installed, server, newFlowRun(), {
			actionName: 'generate_video',
			stepName: 'generate',
			input: { auth: { type: 'CUSTOM_AUTH', props: { apiKey: sandbox.keys.premium, baseUrl: sandbox.url, plan: 'premium' } }, prompt: 'A refused address', ...fast },
		});
		expect(result).toEqual(expect.objectContaining({ status: 'SUCCEEDED', output: expect.objectContaining({ status: 'done', waitedBy: 'polling', callbackSkipped: expect.stringMatching(/refused .* as a callback URL/) }) }));
		expect(sandbox.journal.filter((entry) => entry.path === '/api/v1/generate').map((entry) => entry.status)).toEqual([400, 202]);
	});
});
