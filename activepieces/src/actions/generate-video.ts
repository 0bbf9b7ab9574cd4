/* eslint-disable @n8n/community-nodes/no-restricted-imports -- the Activepieces piece: n8n's rules for community nodes do not apply to it */
import { createAction, Property, type ActionContext } from '@activepieces/pieces-framework';
import { ExecutionType } from '@activepieces/shared';
import {
	DEFAULT_DURATION_SECONDS,
	DEFAULT_RESOLUTION,
	GENERATE_LIMITS,
	TYPICAL_RENDER_SECONDS,
	canonicalJson,
	derivedIdempotencyKey,
	generationMode,
	isAcceptedCallbackUrl,
	isTerminal,
	jobFailedError,
	validateGenerateInput,
	type GenerateVideoInput,
	type JobRecord,
	type OmniVideoClient,
} from '../../../core';
import { omniVideoAuth } from '../auth';
import { connectionOf, inStepTerms, omniVideoClient } from '../host';
import { includeVideoFileProp, jobOutput, type JobOutput } from '../job';

/** Activepieces stops a run after 600 s of activity (its cloud, and self-hosted instances by default). */
const RUN_CAP_MS = 600_000;
/** Polling ends this long before the cap: room for the last look, the download and the steps after. */
const RUN_CAP_MARGIN_MS = 60_000;
export const MAX_POLL_MS = RUN_CAP_MS - RUN_CAP_MARGIN_MS;

/** How long polling may go on: as asked, never past the run's cap. */
export function pollTimeoutMs(seconds: unknown): number {
	const asked = Number(seconds) > 0 ? Number(seconds) * 1000 : MAX_POLL_MS;
	return Math.min(asked, MAX_POLL_MS);
}

/**
 * What one run of the step sent, kept in the flow's store under its idempotency key: a retry of
 * the step must send the same body (the same callback URL), and the resumed step must know its job.
 */
interface Attempt {
	callbackUrl?: string;
	waitpointId?: string;
	jobId?: string;
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
 * A waitpoint whose resume URL Omni Video can call, or undefined when this instance cannot be
 * called back (plain http, as a self-hosted instance behind NAT usually is): then the step polls.
 */
async function callbackWaitpoint(ctx: Context, allowInsecureLoopbackCallback: boolean) {
	if (!isAcceptedCallbackUrl(ctx.server.publicUrl, { allowInsecureLoopbackCallback })) return undefined;
	const waitpoint = await ctx.run.createWaitpoint({ type: 'WEBHOOK' });
	return isAcceptedCallbackUrl(waitpoint.resumeUrl, { allowInsecureLoopbackCallback }) ? waitpoint : undefined;
}

/** A failed job fails the step with its reason and id; a done one is the step's output. */
async function finished(ctx: Context, job: JobRecord, extra: Record<string, unknown>, storeKey: string): Promise<JobOutput> {
	await ctx.store.delete(storeKey);
	if (job.status === 'failed') throw jobFailedError(job);
	return jobOutput(job, { files: ctx.propsValue.includeVideoFile ? ctx.files : undefined, extra });
}

async function poll(client: OmniVideoClient, job: JobRecord, ctx: Context, expectedMs?: number): Promise<JobRecord> {
	if (isTerminal(job)) return job;
	return client.waitForJob(job.id, { timeoutMs: pollTimeoutMs(ctx.propsValue.timeoutSeconds), expectedMs });
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
	const idempotencyKey = derivedIdempotencyKey('activepieces', ctx.flows.current.id, ctx.run.id, ctx.step.name, canonicalJson(request));
	const storeKey = `omni-video:${idempotencyKey}`;
	const expectedMs = Number(propsValue.expectedSeconds) > 0 ? Number(propsValue.expectedSeconds) * 1000 : undefined;

	if (ctx.executionType === ExecutionType.RESUME) {
		const jobId = (await ctx.store.get<Attempt>(storeKey))?.jobId;
		if (!jobId) throw new Error('This step resumed without the job it created (its record in the flow\'s store is gone). Look the job up with Get Job, or run the flow again.');
		const job = await poll(client, await client.getJob(jobId), ctx, 0);
		return finished(ctx, job, { idempotencyKey, waitedBy: 'callback' }, storeKey);
	}

	let attempt = (await ctx.store.get<Attempt>(storeKey)) ?? undefined;
	if (!attempt) {
		const waitpoint = wait === 'callback' && !testing ? await callbackWaitpoint(ctx, allowInsecureLoopbackCallback) : undefined;
		attempt = waitpoint ? { callbackUrl: waitpoint.resumeUrl, waitpointId: waitpoint.id } : { callbackUrl: input.callbackUrl };
		await ctx.store.put(storeKey, attempt);
	}
	const extra = { mode: generationMode(request), idempotencyKey };
	let job: JobRecord;
	let expectedJobMs = expectedMs;
	if (attempt.jobId) {
		// A retry of the step after its job was made: pick the job up; it may have ended meanwhile.
		job = await client.getJob(attempt.jobId);
	} else {
		const created = await client.generateVideo(
			{ ...input, callbackUrl: attempt.callbackUrl },
			{ idempotencyKey, allowInsecureLoopbackCallback, expectedMs, watched: wait !== 'none' },
		);
		job = created.job;
		expectedJobMs = created.expectedMs;
		await ctx.store.put(storeKey, { ...attempt, jobId: job.id });
	}
	if (wait === 'none') return finished(ctx, job, extra, storeKey);
	// Never pause for a job that has already ended: its callback has been sent already.
	if (attempt.waitpointId && !isTerminal(job)) {
		ctx.run.waitForWaitpoint(attempt.waitpointId);
		return jobOutput(job, { extra: { ...extra, waitedBy: 'callback' } });
	}
	return finished(ctx, await poll(client, job, ctx, expectedJobMs), { ...extra, waitedBy: 'polling' }, storeKey);
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
