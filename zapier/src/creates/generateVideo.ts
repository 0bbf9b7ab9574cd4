import { defineCreate, type Bundle, type ZObject } from 'zapier-platform-core';
import {
	AuthError,
	CreditsError,
	DEFAULT_DURATION_SECONDS,
	DEFAULT_RESOLUTION,
	RateLimitError,
	TimeoutError,
	TransportError,
	ValidationError,
	generationMode,
	jobFailedError,
	validateGenerateInput,
	type GenerateVideoInput,
	type JobRecord,
	type OmniVideoClient,
} from '../../../core';
import { appThrottle, asZapierErrors } from '../errors';
import { omniVideoClient } from '../host';
import { JOB_OUTPUT_FIELDS, JOB_SAMPLE, jobOutput, type JobOutput } from '../job';
import { INCLUDE_VIDEO_FILE_FIELD, uploadFileField, videoFileHydrator } from '../files';
import { deadlineIn } from '../connection';
import { forgetAttempt, recallAttempt, recordAttempt, replaySafeKey } from '../replay';

/** Polls end this long before the step's deadline, so that the last look has time to answer. */
const LAST_LOOK_MARGIN_MS = 3_000;
/** When a job from an earlier attempt is still rendering: look again after this long. */
const LOOK_AGAIN_SECONDS = 30;

type GenerateInput = {
	prompt: string;
	resolution?: string;
	duration?: number | string;
	imageUrl?: string;
	imageFile?: string;
	videoUrl?: string;
	videoFile?: string;
	includeVideoFile?: boolean | string;
	waitForVideo?: boolean | string;
	callbackUrl?: string;
	runReference?: string;
};

/** What perform hands to performResume (Zapier keeps it as `bundle.outputData`). */
type Submitted = JobOutput & { includeVideoFile?: boolean };

const PENDING_UPLOAD = 'https://upload.pending.invalid/file';

function isYes(value: unknown): boolean {
	return value === true || value === 'true' || value === 'yes';
}

function blankToUndefined(value: unknown): string | undefined {
	const text = typeof value === 'string' ? value.trim() : '';
	return text === '' ? undefined : text;
}

/**
 * Checks everything, uploads file fields to Omni Video storage (only then: bad input costs no
 * request), and returns the input for the create.
 */
async function prepareInput(
	z: ZObject,
	client: OmniVideoClient,
	fields: GenerateInput,
	options: { allowInsecureLoopbackCallback: boolean; callbackUrl?: string; deadlineAtMs: number },
): Promise<GenerateVideoInput> {
	const imageFile = blankToUndefined(fields.imageFile);
	const videoFile = blankToUndefined(fields.videoFile);
	const input: GenerateVideoInput = {
		prompt: String(fields.prompt ?? ''),
		resolution: blankToUndefined(fields.resolution) ?? DEFAULT_RESOLUTION,
		duration: blankToUndefined(String(fields.duration ?? '')) ?? DEFAULT_DURATION_SECONDS,
		imageUrl: blankToUndefined(fields.imageUrl),
		videoUrl: blankToUndefined(fields.videoUrl),
		callbackUrl: options.callbackUrl,
	};
	if ((imageFile && input.imageUrl) || (videoFile && input.videoUrl)) {
		throw new z.errors.Error('Give the source once: either its URL or its file, not both.', 'invalid_request', 400);
	}
	validateGenerateInput(
		{
			...input,
			imageUrl: input.imageUrl ?? (imageFile && PENDING_UPLOAD),
			videoUrl: input.videoUrl ?? (videoFile && PENDING_UPLOAD),
		},
		{ allowInsecureLoopbackCallback: options.allowInsecureLoopbackCallback },
	);
	const { deadlineAtMs } = options;
	if (imageFile) {
		input.imageUrl = (await uploadFileField(z, client, imageFile, { field: 'Image File', kind: 'image', fallbackName: 'image', deadlineAtMs })).fileUrl;
	}
	if (videoFile) {
		input.videoUrl = (await uploadFileField(z, client, videoFile, { field: 'Video File', kind: 'video', fallbackName: 'video.mp4', deadlineAtMs })).fileUrl;
	}
	return input;
}

/** The job as the step's output, with the video as a file when asked for and ready. */
function finished(z: ZObject, job: JobRecord, submitted: Partial<Submitted>): JobOutput {
	const extra: Record<string, unknown> = {};
	for (const key of ['mode', 'submittedAt'] as const) if (submitted[key] !== undefined) extra[key] = submitted[key];
	if (submitted.includeVideoFile && job.status === 'done' && job.resultUrls[0]) {
		extra.videoFile = z.dehydrateFile(videoFileHydrator, { url: job.resultUrls[0] });
	}
	return jobOutput(job, extra);
}

/** Polls until the step's deadline draws near; returns the job as it stands then, or throws if it failed. */
async function waitWithinRun(client: OmniVideoClient, job: JobRecord, expectedMs: number, deadlineAtMs: number): Promise<JobRecord> {
	const timeoutMs = deadlineAtMs - LAST_LOOK_MARGIN_MS - Date.now();
	if (job.status === 'done' || job.status === 'failed' || timeoutMs <= 0) return job;
	let latest = job;
	try {
		return await client.waitForJob(job.id, {
			timeoutMs,
			deadlineAtMs,
			// Look before the run ends even when the estimate is longer than the run may last.
			expectedMs: Math.min(expectedMs, timeoutMs / 2),
			onProgress: (seen) => {
				latest = seen;
			},
		});
	} catch (error) {
		// Out of time, or no room left in the plan's windows before the deadline: the job as last seen.
		if (error instanceof TimeoutError || error instanceof RateLimitError) return latest;
		throw error;
	}
}

/** Errors that prove the create never happened: a replay may start afresh (new callback URL, new uploads). */
function surelyNotCreated(error: unknown): boolean {
	if (error instanceof TransportError) return error.failure === 'refused';
	return error instanceof RateLimitError || error instanceof ValidationError || error instanceof CreditsError || error instanceof AuthError;
}

/**
 * A job the step does not park for: returned as it stands when the step does not wait, else waited
 * for within the run. Still rendering then, the editor's sample shows it as it stands; a replay asks
 * Zapier to run the step again later (its callback went to the earlier run, which nobody waits on).
 */
async function pickUp(
	z: ZObject,
	client: OmniVideoClient,
	job: JobRecord,
	options: { waits: boolean; isSample: boolean; expectedMs: number; deadlineAtMs: number; submitted: Partial<Submitted> },
): Promise<JobOutput> {
	if (!options.waits) return finished(z, job, options.submitted);
	const latest = await waitWithinRun(client, job, options.expectedMs, options.deadlineAtMs);
	if (latest.status === 'failed') throw jobFailedError(latest);
	if (latest.status === 'done' || options.isSample) return finished(z, latest, options.submitted);
	throw appThrottle(
		z,
		`Omni Video job ${job.id}, created by an earlier attempt of this step, is still ${latest.status}. ` +
			`Zapier runs this step again in ${LOOK_AGAIN_SECONDS} s to pick up the video; no second job is created.`,
		LOOK_AGAIN_SECONDS,
	);
}

/**
 * Creates the job once per input, replays included (see replay.ts): a replay finds the attempt in
 * Zapier's cache and either picks up the job it made or resends exactly the same request, which the
 * service answers with the original job. Wait for the Video: Yes parks the step on Zapier's
 * callback URL (performResume); No returns the queued job at once; the editor's sample waits
 * within the run.
 */
async function perform(z: ZObject, bundle: Bundle<GenerateInput>): Promise<JobOutput> {
	return asZapierErrors(z, async () => {
		const deadlineAtMs = deadlineIn();
		const fields = bundle.inputData;
		const { client, allowInsecureLoopbackCallback } = omniVideoClient(z, bundle);
		const includeVideoFile = isYes(fields.includeVideoFile);
		const isSample = Boolean(bundle.meta?.isLoadingSample);
		// The editor cannot resume a step: a sample always waits within the run instead.
		const waits = isSample || fields.waitForVideo === undefined || isYes(fields.waitForVideo);
		const idempotencyKey = replaySafeKey('generateVideo', bundle);
		const earlier = await recallAttempt(z, idempotencyKey);
		const submittedAt = new Date().toISOString();

		if (earlier?.jobId) {
			z.console.log(`Replay: job ${earlier.jobId} was created by an earlier attempt of this step (idempotency key ${idempotencyKey}).`);
			const mode = generationMode(validateGenerateInput(earlier.input, { allowInsecureLoopbackCallback }));
			const job = await client.getJob(earlier.jobId, { deadlineAtMs });
			return pickUp(z, client, job, { waits, isSample, expectedMs: 0, deadlineAtMs, submitted: { mode, submittedAt, includeVideoFile } });
		}

		let input = earlier?.input;
		const parks = waits && !isSample && !input;
		if (!input) {
			const userCallback = waits ? undefined : blankToUndefined(fields.callbackUrl);
			input = await prepareInput(z, client, fields, { allowInsecureLoopbackCallback, callbackUrl: userCallback, deadlineAtMs });
			// Asking for Zapier's callback URL is what parks the step: only when the create is sent.
			if (parks) input.callbackUrl = z.generateCallbackUrl();
			await recordAttempt(z, idempotencyKey, { input });
		}
		let created;
		try {
			created = await client.generateVideo(input, { idempotencyKey, allowInsecureLoopbackCallback, deadlineAtMs });
		} catch (error) {
			if (surelyNotCreated(error)) await forgetAttempt(z, idempotencyKey);
			throw error;
		}
		await recordAttempt(z, idempotencyKey, { input, jobId: created.job.id });
		const submitted = { mode: created.mode, submittedAt, includeVideoFile };
		if (parks) return { ...jobOutput(created.job, { mode: created.mode, submittedAt }), includeVideoFile } satisfies Submitted;
		return pickUp(z, client, created.job, { waits, isSample, expectedMs: created.expectedMs, deadlineAtMs, submitted });
	});
}

/**
 * Runs when Omni Video calls the step's callback URL. The callback only says "look now": the
 * job is read with the connection's own key, so a forged or mistaken callback cannot change what
 * the step returns.
 */
async function performResume(z: ZObject, bundle: Bundle): Promise<JobOutput> {
	return asZapierErrors(z, async () => {
		const deadlineAtMs = deadlineIn();
		const submitted: Partial<Submitted> = bundle.outputData ?? {};
		const jobId = String(submitted.jobId ?? '');
		if (!jobId) throw new z.errors.Error('This step resumed without the job it created; run the Zap again.', 'missing_job', 500);
		const claimed = (bundle.cleanedRequest as { id?: unknown } | undefined)?.id;
		if (claimed !== undefined && claimed !== jobId) {
			z.console.log(`Callback named job ${String(claimed)}, this step waits for ${jobId}: reading ${jobId} instead.`);
		}
		const { client } = omniVideoClient(z, bundle);
		const job = await waitWithinRun(client, await client.getJob(jobId, { deadlineAtMs }), 0, deadlineAtMs);
		if (job.status === 'failed') throw jobFailedError(job);
		if (job.status !== 'done') {
			throw new z.errors.Error(
				`Omni Video called back, but job ${jobId} is still ${job.status}. Add a Find Job step later in the Zap (or a delay) to pick up the video.`,
				'job_not_finished',
			);
		}
		return finished(z, job, submitted);
	});
}

export default defineCreate({
	key: 'generateVideo',
	noun: 'Video',
	display: {
		label: 'Generate Video',
		description: 'Creates a video from a prompt, and optionally an image or a video, and waits until it is ready (or returns the queued job at once).',
	},
	operation: {
		perform,
		performResume,
		// Zapier's throttles cannot vary by plan: they fit Pro (5 jobs at once; with Upload Image and
		// Find Job at 10 a minute each, 30 requests a minute). Premium's extra room and the hour
		// windows are kept by the app's own limiter and the service, as throttled retries.
		throttle: { window: 60, limit: 5, scope: ['auth' as const] },
		inputFields: [
			{
				key: 'prompt',
				label: 'Prompt',
				type: 'text' as const,
				required: true,
				helpText: 'What the video shows, in up to 2,000 characters. Example: "A paper boat drifting down a rainy street at dusk".',
			},
			{
				key: 'resolution',
				label: 'Resolution',
				type: 'string' as const,
				required: false,
				default: DEFAULT_RESOLUTION,
				choices: [
					{ value: '720P', label: '720p (fastest, fewest credits)', sample: '720P' },
					{ value: '1080P', label: '1080p', sample: '1080P' },
					{ value: '4K', label: '4K (slowest, most credits)', sample: '4K' },
				],
				helpText: 'Higher resolutions take longer and cost more credits.',
			},
			{
				key: 'duration',
				label: 'Duration (seconds)',
				type: 'integer' as const,
				required: false,
				default: String(DEFAULT_DURATION_SECONDS),
				helpText: 'Length of the video: 4 to 10 seconds.',
			},
			{
				key: 'imageUrl',
				label: 'Image URL',
				type: 'string' as const,
				required: false,
				helpText: 'Optional: a public URL of a JPEG, PNG or WebP image to animate (image to video). Leave empty, with no video either, for text to video.',
			},
			{
				key: 'imageFile',
				label: 'Image File',
				type: 'file' as const,
				required: false,
				helpText: 'Optional, instead of Image URL: an image file from an earlier step. It is uploaded to Omni Video storage first.',
			},
			{
				key: 'videoUrl',
				label: 'Video URL',
				type: 'string' as const,
				required: false,
				helpText: 'Optional: a public URL of an MP4 to restyle (video to video). Use an image or a video, not both.',
			},
			{
				key: 'videoFile',
				label: 'Video File',
				type: 'file' as const,
				required: false,
				helpText: 'Optional, instead of Video URL: a video file from an earlier step, uploaded to Omni Video storage first.',
			},
			{
				key: 'waitForVideo',
				label: 'Wait for the Video',
				type: 'string' as const,
				required: false,
				default: 'yes',
				choices: [
					{ value: 'yes', label: 'Yes: the step ends when the video is ready', sample: 'yes' },
					{ value: 'no', label: 'No: return the queued job at once', sample: 'no' },
				],
				helpText:
					'Yes pauses the Zap until Omni Video reports the job finished (usually 30 to 90 seconds), then continues with the video. No continues at once with the job ID; pick the video up later with Find Job, or with a Job Completed trigger whose webhook URL you give as Callback URL.',
			},
			{
				key: 'callbackUrl',
				label: 'Callback URL',
				type: 'string' as const,
				required: false,
				helpText:
					'Only with Wait for the Video: No. An https:// address Omni Video calls when the job finishes, such as the webhook URL of a Job Completed trigger in another Zap.',
			},
			{
				key: 'runReference',
				label: 'Run Reference',
				type: 'string' as const,
				required: false,
				helpText:
					'Optional. Replays of a step never create a second job: a run with exactly the same input as one in the last 24 hours gets that run\'s job. To make a new video each run even with the same prompt, map something unique to the run here, such as the trigger\'s ID.',
			},
			INCLUDE_VIDEO_FILE_FIELD,
		],
		outputFields: [
			...JOB_OUTPUT_FIELDS,
			{ key: 'mode', label: 'Mode (text-to-video, image-to-video or video-to-video)', type: 'string' as const },
			{ key: 'submittedAt', label: 'Submitted At', type: 'datetime' as const },
			{ key: 'videoFile', label: 'Video File', type: 'file' as const },
		],
		sample: { ...JOB_SAMPLE, mode: 'text-to-video', submittedAt: '2026-11-22T09:29:59.000Z' },
	},
});
