/* eslint-disable @n8n/community-nodes/no-restricted-imports -- the Activepieces piece: n8n's rules for community nodes do not apply to it */
import { createAction, Property, type ActionContext } from '@activepieces/pieces-framework';
import { DEFAULT_MCP_DATA, ExecutionType } from '@activepieces/shared';
import { randomUUID } from 'node:crypto';
import {
	DEFAULT_DURATION_SECONDS,
	DEFAULT_RESOLUTION,
	GENERATE_LIMITS,
	TYPICAL_RENDER_SECONDS,
	canonicalJson,
	derivedIdempotencyKey,
	expectedRenderSeconds,
	generationMode,
	isAcceptedCallbackUrl,
	isTerminal,
	jobFailedError,
	isOmniVideoError,
	validateGenerateInput,
	type CreateOutcome,
	type GenerateVideoInput,
	type JobRecord,
	type GenerateVideoOptions,
	type OmniVideoClient,
} from '../../../core';
import { omniVideoAuth } from '../auth';
import { connectionOf, inStepTerms, omniVideoClient } from '../host';
import { includeVideoFileProp, jobOutput, type JobOutput } from '../job';

import { runStartedAtMs } from '../run/runLimits';
import { MAX_POLL_MS, RUN_CAP_MS, lookAfterMs, pollTimeoutMs, runLeftMs } from '../run/pollBudget';
import { entryOf, outcomeUnknownError, skipped, stepLedger, type Attempt } from '../run/stepAttempt';
import { listRecord } from '../run/stepRecords';

/**
 * An agent's or MCP tool's call: the engine runs the action alone, with constant flow and run ids
 * (DEFAULT_MCP_DATA), no waitpoints and no retries. Each call is a new request for a video.
 */
function isToolCall(ctx: { flows: { current: { id: string } }; run: { id: string } }): boolean {
	return ctx.run.id === DEFAULT_MCP_DATA.flowRunId || ctx.flows.current.id === DEFAULT_MCP_DATA.flowId;
}

const RESOLUTION_LABELS: Record<(typeof GENERATE_LIMITS.resolutions)[number], string> = {
	'720P': '720p (fastest, fewest credits)',
	'1080P': '1080p',
	'4K': '4K (slowest, most credits)',
};

const props = {
	prompt: Property.LongText({
		displayName: 'Prompt',
		description: `What the video shows, in up to ${GENERATE_LIMITS.maxPromptCharacters.toLocaleString('en-US')} characters.`,
		required: true,
	}),
	resolution: Property.StaticDropdown({
		displayName: 'Resolution',
		description: 'Higher resolutions take longer and cost more credits.',
		required: false,
		defaultValue: DEFAULT_RESOLUTION,
		options: { options: GENERATE_LIMITS.resolutions.map((value) => ({ label: RESOLUTION_LABELS[value], value })) },
	}),
	duration: Property.Number({
		displayName: 'Duration (seconds)',
		description: `Length of the video: ${GENERATE_LIMITS.minDurationSeconds} to ${GENERATE_LIMITS.maxDurationSeconds} seconds.`,
		required: false,
		defaultValue: DEFAULT_DURATION_SECONDS,
	}),
	imageUrl: Property.ShortText({ displayName: 'Image URL', description: 'Optional: an image to animate (image to video), such as the File URL from Upload Image.', required: false }),
	videoUrl: Property.ShortText({ displayName: 'Video URL', description: 'Optional: an MP4 to restyle (video to video). An image or a video, not both.', required: false }),
	wait: Property.StaticDropdown({
		displayName: 'Wait for the Video',
		description:
			"Callback pauses the run until Omni Video reports the job finished (no requests while paused; it needs this instance on public https://, else the step polls). " +
			`Poll waits inside the run, within its ${RUN_CAP_MS / 1000} s; Don't Wait returns the queued job at once.`,
		required: false,
		defaultValue: 'callback',
		options: {
			options: [
				{ label: 'Callback (pause until the job ends)', value: 'callback' },
				{ label: 'Poll (wait inside the run)', value: 'poll' },
				{ label: "Don't wait", value: 'none' },
			],
		},
	}),
	timeoutSeconds: Property.Number({
		displayName: 'Polling Timeout (seconds)',
		description: `When polling: give up after this long (at most ${MAX_POLL_MS / 1000}, inside the run's ${RUN_CAP_MS / 1000} s); the error names the job, for Get Job later.`,
		required: false,
		defaultValue: MAX_POLL_MS / 1000,
	}),
	expectedSeconds: Property.Number({
		displayName: 'Expected Render Time (seconds)',
		description: `How long your jobs usually take; empty estimates ${TYPICAL_RENDER_SECONDS.min} to ${TYPICAL_RENDER_SECONDS.max} s from resolution and duration. Polling takes its first look then.`,
		required: false,
	}),
	callbackUrl: Property.ShortText({
		displayName: 'Callback URL',
		description: "Only with Don't Wait: an https:// address Omni Video calls when the job ends, such as a Job Completed trigger's webhook URL.",
		required: false,
	}),
	includeVideoFile: includeVideoFileProp,
};

type Context = ActionContext<typeof omniVideoAuth, typeof props>;

function blankToUndefined(value: unknown): string | undefined {
	const text = typeof value === 'string' ? value.trim() : '';
	return text === '' ? undefined : text;
}

/**
 * The pause's waitpoint: its resume URL is the job's callback URL, so the callback resumes the
 * run; it is a DELAY waitpoint, so that when the callback never comes (lost, or not sent: the
 * spec promises neither retries nor callbacks for failed jobs) the server resumes the run anyway
 * at `resumeAt`, a while after the job's expected end, and the step looks the job up.
 * Undefined when this instance cannot be called back (plain http, as a self-hosted instance
 * behind NAT usually is): then the step polls.
 */
async function callbackWaitpoint(ctx: Context, allowInsecureLoopbackCallback: boolean, resumeAt: Date) {
	if (!isAcceptedCallbackUrl(ctx.server.publicUrl, { allowInsecureLoopbackCallback })) return undefined;
	const waitpoint = await ctx.run.createWaitpoint({ type: 'DELAY', resumeDateTime: resumeAt.toISOString() });
	return isAcceptedCallbackUrl(waitpoint.resumeUrl, { allowInsecureLoopbackCallback }) ? waitpoint : undefined;
}

/** The service refused the job's callback URL (nothing created, nothing charged). */
function isRefusedCallbackUrl(error: unknown): boolean {
	return isOmniVideoError(error) && error.code === 'invalid_callback_url';
}

/**
 * A failed job fails the step with its reason and id; a done one is the step's output. The
 * store's record of the job stays (see run/stepRecords.ts, pruned after a day): the step run
 * again in this run, however the run comes to run it, gets the same job, and never pays for
 * another.
 */
async function finished(ctx: Context, job: JobRecord, extra: Record<string, unknown>): Promise<JobOutput> {
	if (job.status === 'failed') throw jobFailedError(job);
	return jobOutput(job, { files: ctx.propsValue.includeVideoFile ? ctx.files : undefined, extra });
}

async function poll(client: OmniVideoClient, job: JobRecord, ctx: Context, expectedMs?: number): Promise<JobRecord> {
	if (isTerminal(job)) return job;
	return client.waitForJob(job.id, { timeoutMs: pollTimeoutMs(ctx.propsValue.timeoutSeconds, runLeftMs(ctx.run.id)), expectedMs });
}

/**
 * Creates the job once per run, step and input (retries of the step send the same request with the
 * same idempotency key, and get the same job), then waits as asked. Callback pauses the run on a
 * waitpoint whose resume URL is the job's callback URL; the resumed step reads the job with the
 * connection's key (the callback only says "look now") and polls if it has not ended yet.
 */
async function generate(ctx: Context, testing: boolean): Promise<JobOutput> {
	const { client, allowInsecureLoopbackCallback } = omniVideoClient(connectionOf(ctx.auth));
	const { propsValue } = ctx;
	const wait = propsValue.wait ?? 'callback';
	const input: GenerateVideoInput = {
		prompt: propsValue.prompt,
		resolution: blankToUndefined(propsValue.resolution) ?? DEFAULT_RESOLUTION,
		duration: propsValue.duration ?? DEFAULT_DURATION_SECONDS,
		imageUrl: blankToUndefined(propsValue.imageUrl),
		videoUrl: blankToUndefined(propsValue.videoUrl),
		callbackUrl: wait === 'none' ? blankToUndefined(propsValue.callbackUrl) : undefined,
	};
	// Bad input stops here, before any request, waitpoint or stored attempt.
	const request = validateGenerateInput(input, { allowInsecureLoopbackCallback });
	if (isToolCall(ctx)) return toolCall(ctx, client, input, allowInsecureLoopbackCallback);
	runStartedAtMs(ctx.run.id, Date.now());
	const idempotencyKey = derivedIdempotencyKey('activepieces', ctx.flows.current.id, ctx.run.id, ctx.step.name, canonicalJson(request));
	const storeKey = `omni-video:${idempotencyKey}`;
	const expectedMs = Number(propsValue.expectedSeconds) > 0 ? Number(propsValue.expectedSeconds) * 1000 : undefined;

	if (ctx.executionType === ExecutionType.RESUME) {
		const jobId = (await ctx.store.get<Attempt>(storeKey))?.jobId;
		if (!jobId) throw new Error('This step resumed without the job it created (its record in the flow\'s store is gone). Look the job up with Get Job, or run the flow again.');
		// Resumed by the job's callback, or by the waitpoint's own time when no callback came.
		const job = await poll(client, await client.getJob(jobId), ctx, 0);
		return finished(ctx, job, { idempotencyKey, waitedBy: 'callback' });
	}

	let attempt = (await ctx.store.get<Attempt>(storeKey)) ?? undefined;
	const extra: Record<string, unknown> = { mode: generationMode(request), idempotencyKey };
	if (!attempt) {
		const expectedEndMs = expectedMs ?? expectedRenderSeconds(request.resolution, request.duration) * 1000;
		const resumeAt = new Date(Date.now() + expectedEndMs + lookAfterMs(expectedEndMs));
		const waitpoint = wait === 'callback' && !testing ? await callbackWaitpoint(ctx, allowInsecureLoopbackCallback, resumeAt) : undefined;
		attempt = waitpoint ? { callbackUrl: waitpoint.resumeUrl, waitpointId: waitpoint.id } : { callbackUrl: input.callbackUrl };
		await listRecord(ctx.store, storeKey, Date.now());
	}
	const create = (sent: Attempt, watched: boolean) => createOnce(ctx, storeKey, client, sent, input, { idempotencyKey, allowInsecureLoopbackCallback, expectedMs, watched });
	let made: CreateOutcome;
	try {
		made = await create(attempt, wait !== 'none');
	} catch (error) {
		if (!attempt.waitpointId || !isRefusedCallbackUrl(error)) throw error;
		// Refused for the callback URL alone (nothing made, nothing charged, the record put back): the step polls, as n8n's does.
		attempt = { callbackSkipped: `Omni Video refused this instance's resume URL as a callback URL (${String((error as Error).message).split('. ')[0]})` };
		made = await create(attempt, true);
	}
	if (!('created' in made)) throw outcomeUnknownError(idempotencyKey, made.sentAtMs);
	const { created } = made;
	const { job } = created;
	if (wait === 'none') return finished(ctx, job, extra);
	if (made.outcome === 'made before') {
		// A retry of the step after its job was made: the job as it is now (it may have ended
		// meanwhile), polled; its pause, if it had one, is over.
		return finished(ctx, await poll(client, job, ctx, expectedMs), { ...extra, waitedBy: 'polling', ...skipped(attempt) });
	}
	// Never pause for a job that has already ended: its callback has been sent already.
	if (attempt.waitpointId && !isTerminal(job)) {
		ctx.run.waitForWaitpoint(attempt.waitpointId);
		return jobOutput(job, { extra: { ...extra, waitedBy: 'callback' } });
	}
	return finished(ctx, await poll(client, job, ctx, created.expectedMs), { ...extra, waitedBy: 'polling', ...skipped(attempt) });
}

/**
 * Sends the step's create once (core's createVideoOnce), the step's record in the flow's store its
 * ledger: a record that names a job gives that job as it is now; one sent without a job, an
 * outcome unknown, never sent again. A create refused with an answer puts the record back as it
 * was, and may be sent again; one sent and never answered (no answer, 5xx) is outcomeUnknownError.
 */
async function createOnce(
	ctx: Context,
	storeKey: string,
	client: OmniVideoClient,
	attempt: Attempt,
	input: GenerateVideoInput,
	options: { idempotencyKey: string } & GenerateVideoOptions,
): Promise<CreateOutcome> {
	const ledger = stepLedger(ctx.store, storeKey, attempt);
	try {
		return await client.createVideoOnce({ ...input, callbackUrl: attempt.callbackUrl }, { ...options, ledger, recorded: entryOf(attempt) ?? null });
	} catch (error) {
		// Core noted the create's answer lost (createMayHaveMadeJob): whether it made a job is unknown.
		if (ledger.answerLostAtMs !== undefined) throw outcomeUnknownError(options.idempotencyKey, ledger.answerLostAtMs, error);
		throw error;
	}
}

/**
 * An agent's or MCP tool's call. Its flow and run ids are the same for every call, so a key
 * derived from them would hand the same prompt the same old job for 24 h: each call gets a key of
 * its own (one call, one create; the engine does not retry a tool). It cannot pause (no flow to
 * resume), so Callback polls; a Callback URL given with Don't Wait is sent as given.
 */
async function toolCall(ctx: Context, client: OmniVideoClient, input: GenerateVideoInput, allowInsecureLoopbackCallback: boolean): Promise<JobOutput> {
	const wait = ctx.propsValue.wait ?? 'callback';
	const idempotencyKey = derivedIdempotencyKey('activepieces-tool', randomUUID());
	const expectedMs = Number(ctx.propsValue.expectedSeconds) > 0 ? Number(ctx.propsValue.expectedSeconds) * 1000 : undefined;
	const created = await client.generateVideo(input, { idempotencyKey, allowInsecureLoopbackCallback, expectedMs, watched: wait !== 'none' });
	const extra = { mode: generationMode(validateGenerateInput(input, { allowInsecureLoopbackCallback })), idempotencyKey };
	if (wait === 'none') return finished(ctx, created.job, extra);
	const job = isTerminal(created.job) ? created.job : await client.waitForJob(created.job.id, { timeoutMs: pollTimeoutMs(ctx.propsValue.timeoutSeconds), expectedMs: created.expectedMs });
	return finished(ctx, job, { ...extra, waitedBy: 'polling' });
}

export const generateVideo = createAction({
	auth: omniVideoAuth,
	name: 'generate_video',
	displayName: 'Generate Video',
	description: 'Creates a video from a prompt, and optionally an image or a video, and waits until it is ready (or returns the queued job at once).',
	props,
	run: (ctx) => inStepTerms(() => generate(ctx, false)),
	// Testing a step in the builder cannot pause: it polls instead.
	test: (ctx) => inStepTerms(() => generate(ctx, true)),
});
