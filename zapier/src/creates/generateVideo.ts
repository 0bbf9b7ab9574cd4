/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/require-node-api-error -- the Zapier app: n8n's rules for community nodes do not apply to it */
import { defineCreate, type Bundle, type ZObject } from 'zapier-platform-core';
import {
	DEFAULT_DURATION_SECONDS,
	DEFAULT_RESOLUTION,
	TimeoutError,
	jobFailedError,
	validateGenerateInput,
	type GenerateVideoInput,
	type JobRecord,
	type OmniVideoClient,
} from '../../../core';
import { asZapierErrors } from '../errors';
import { omniVideoClient } from '../host';
import { JOB_OUTPUT_FIELDS, JOB_SAMPLE, jobOutput, type JobOutput } from '../job';
import { INCLUDE_VIDEO_FILE_FIELD, readFileField, videoFileHydrator } from '../files';

/**
 * How long a step may wait inside one run: Zapier stops a run after 30 s, so loading a sample
 * and a resume that finds the job still rendering poll for at most this long.
 */
export const IN_RUN_WAIT_MS = 20_000;

type GenerateInput = {
	prompt: string;
	resolution?: string;
	duration?: number | string;
	imageUrl?: string;
	imageFile?: string;
	videoUrl?: string;
	videoFile?: string;
	includeVideoFile?: boolean | string;
};

/** What perform hands to performResume (Zapier keeps it as `bundle.outputData`). */
type Submitted = JobOutput & { includeVideoFile?: boolean };

const PENDING_UPLOAD = 'https://upload.pending.invalid/file';

function wantsFile(value: unknown): boolean {
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
	allowInsecureLoopbackCallback: boolean,
): Promise<GenerateVideoInput> {
	const imageFile = blankToUndefined(fields.imageFile);
	const videoFile = blankToUndefined(fields.videoFile);
	const input: GenerateVideoInput = {
		prompt: String(fields.prompt ?? ''),
		resolution: blankToUndefined(fields.resolution) ?? DEFAULT_RESOLUTION,
		duration: blankToUndefined(String(fields.duration ?? '')) ?? DEFAULT_DURATION_SECONDS,
		imageUrl: blankToUndefined(fields.imageUrl),
		videoUrl: blankToUndefined(fields.videoUrl),
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
		{ allowInsecureLoopbackCallback },
	);
	if (imageFile) input.imageUrl = (await client.uploadImage(await readFileField(z, imageFile, 'image'), { kind: 'image' })).fileUrl;
	if (videoFile) input.videoUrl = (await client.uploadImage(await readFileField(z, videoFile, 'video.mp4'), { kind: 'video' })).fileUrl;
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

/** Polls for at most IN_RUN_WAIT_MS; returns the job as it stands then, or throws if it failed. */
async function waitWithinRun(client: OmniVideoClient, job: JobRecord, expectedMs: number): Promise<JobRecord> {
	let latest = job;
	try {
		return await client.waitForJob(job.id, {
			timeoutMs: IN_RUN_WAIT_MS,
			// Look before the run ends even when the estimate is longer than the run may last.
			expectedMs: Math.min(expectedMs, IN_RUN_WAIT_MS / 2),
			onProgress: (seen) => {
				latest = seen;
			},
		});
	} catch (error) {
		if (error instanceof TimeoutError) return latest;
		throw error;
	}
}

async function perform(z: ZObject, bundle: Bundle<GenerateInput>): Promise<JobOutput> {
	return asZapierErrors(z, async () => {
		const { client, allowInsecureLoopbackCallback } = omniVideoClient(z, bundle);
		const input = await prepareInput(z, client, bundle.inputData, allowInsecureLoopbackCallback);
		const includeVideoFile = wantsFile(bundle.inputData.includeVideoFile);
		const submittedAt = new Date().toISOString();
		if (bundle.meta?.isLoadingSample) {
			// The editor cannot resume a step: wait briefly instead, and show the job as it stands.
			const created = await client.generateVideo(input, { allowInsecureLoopbackCallback });
			const job = await waitWithinRun(client, created.job, created.expectedMs);
			if (job.status === 'failed') throw jobFailedError(job);
			return finished(z, job, { mode: created.mode, submittedAt, includeVideoFile });
		}
		// Asking for the callback URL is what parks the step: only now that it is really sent.
		const created = await client.generateVideo(
			{ ...input, callbackUrl: z.generateCallbackUrl() },
			{ allowInsecureLoopbackCallback },
		);
		const submitted: Submitted = { ...jobOutput(created.job, { mode: created.mode, submittedAt }), includeVideoFile };
		return submitted;
	});
}

/**
 * Runs when Omni Video calls the step's callback URL. The callback only says "look now": the
 * job is read with the connection's own key, so a forged or mistaken callback cannot change what
 * the step returns.
 */
async function performResume(z: ZObject, bundle: Bundle): Promise<JobOutput> {
	return asZapierErrors(z, async () => {
		const submitted: Partial<Submitted> = bundle.outputData ?? {};
		const jobId = String(submitted.jobId ?? '');
		if (!jobId) throw new z.errors.Error('This step resumed without the job it created; run the Zap again.', 'missing_job', 500);
		const claimed = (bundle.cleanedRequest as { id?: unknown } | undefined)?.id;
		if (claimed !== undefined && claimed !== jobId) {
			z.console.log(`Callback named job ${String(claimed)}, this step waits for ${jobId}: reading ${jobId} instead.`);
		}
		const { client } = omniVideoClient(z, bundle);
		let job = await client.getJob(jobId);
		if (job.status !== 'done' && job.status !== 'failed') job = await waitWithinRun(client, job, 0);
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
		description: 'Creates a video from a prompt, and optionally an image or a video, and waits until it is ready.',
	},
	operation: {
		perform,
		performResume,
		// Pro runs 5 jobs at once and 30 requests a minute; a job costs 2 requests (create, confirm).
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
