import { defineInputFields } from 'zapier-platform-core';
import { DEFAULT_DURATION_SECONDS, DEFAULT_RESOLUTION, GENERATE_LIMITS } from '../../../core';
import { JOB_OUTPUT_FIELDS, JOB_SAMPLE, type JobOutput } from '../job';
import { INCLUDE_VIDEO_FILE_FIELD, VIDEO_FILE_OUTPUT_FIELD } from '../files';

/** Generate Video's fields as Zapier hands them to perform. */
export type GenerateInput = {
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

/** What the user fills in, in the editor's order. */
export const GENERATE_VIDEO_INPUT_FIELDS = defineInputFields([
	{
		key: 'prompt',
		label: 'Prompt',
		type: 'text' as const,
		required: true,
		helpText: `What the video shows, in up to ${GENERATE_LIMITS.maxPromptCharacters.toLocaleString('en-US')} characters. Example: "A paper boat drifting down a rainy street at dusk".`,
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
		helpText: `Length of the video: ${GENERATE_LIMITS.minDurationSeconds} to ${GENERATE_LIMITS.maxDurationSeconds} seconds.`,
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
			'Optional: a replay of this step gets the job it made, so that replays never pay twice; a new run with the same input makes a new video once the earlier run\'s step has ended well. Until then (still waiting, or its job failed) a run with the same input is taken as its replay: to keep such runs apart, map something unique to the run here, such as the trigger\'s ID.',
	},
	INCLUDE_VIDEO_FILE_FIELD,
]);

/** What the step returns, labelled for later steps. */
export const GENERATE_VIDEO_OUTPUT_FIELDS = [
	...JOB_OUTPUT_FIELDS,
	{ key: 'mode', label: 'Mode (text-to-video, image-to-video or video-to-video)', type: 'string' as const },
	{ key: 'submittedAt', label: 'Submitted At', type: 'datetime' as const },
	VIDEO_FILE_OUTPUT_FIELD,
];

export const GENERATE_VIDEO_SAMPLE: JobOutput = { ...JOB_SAMPLE, mode: 'text-to-video', submittedAt: '2026-11-22T09:29:59.000Z' };
