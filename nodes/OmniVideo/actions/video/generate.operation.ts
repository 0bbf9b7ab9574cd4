import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';
import { isToolExecution } from '../../../shared/n8nHost';
import { jobItem, jobJson, videoField, videoFieldProperty } from '../../../shared/jobOutput';
import { forEachItem } from '../../../shared/forEachItem';
import { createItemJob } from './createItemJob';
import { continueForCallbacks, parkForCallbacks } from './waitForCallback';
import { isContinuation } from './parkContinuation';
import { DEFAULT_DURATION_SECONDS, DEFAULT_RESOLUTION, GENERATE_LIMITS, isTerminal, jobFailedError } from '../../../../core';
import { callbackFallback, type CallbackFallback } from './callbackFallback';

const { maxPromptCharacters, resolutions, minDurationSeconds, maxDurationSeconds } = GENERATE_LIMITS;

const properties: INodeProperties[] = [
	{
		displayName: 'Prompt',
		name: 'prompt',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. A paper boat sailing down a rainy street at dusk, cinematic',
		description: `What the video should show, in up to ${maxPromptCharacters} characters`,
		typeOptions: { rows: 4 },
	},
	{
		displayName: 'Source',
		name: 'source',
		type: 'options',
		default: 'none',
		description: 'What the video starts from: only the prompt, an image to animate, or footage to transform',
		options: [
			{ name: 'Image From Input Binary (Uploaded First)', value: 'binaryImage' },
			{ name: 'Image URL (Image to Video)', value: 'imageUrl' },
			{ name: 'Prompt Only (Text to Video)', value: 'none' },
			{ name: 'Video URL (Video to Video)', value: 'videoUrl' },
		],
	},
	{
		displayName: 'Image URL',
		name: 'imageUrl',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'e.g. https://files.example.com/frame.png',
		description: 'A public or object-storage URL of a JPEG, PNG or WebP image, such as the File URL from the Upload Image operation',
		displayOptions: { show: { source: ['imageUrl'] } },
	},
	{
		displayName: 'Video URL',
		name: 'videoUrl',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'e.g. https://files.example.com/clip.mp4',
		description: 'A public or object-storage URL of MP4 or QuickTime footage to transform',
		displayOptions: { show: { source: ['videoUrl'] } },
	},
	{
		displayName: 'Input Binary Field',
		name: 'binaryPropertyName',
		type: 'string',
		default: 'data',
		required: true,
		hint: 'The name of the input field holding the image file',
		description: 'The image is uploaded to Omni Video storage first, then animated',
		displayOptions: { show: { source: ['binaryImage'] } },
	},
	{
		displayName: 'Resolution',
		name: 'resolution',
		type: 'options',
		default: DEFAULT_RESOLUTION,
		description: 'Higher resolutions cost more credits and take longer',
		options: resolutions.map((value) => ({ name: value, value })),
	},
	{
		displayName: 'Duration (Seconds)',
		name: 'duration',
		type: 'number',
		default: DEFAULT_DURATION_SECONDS,
		description: `Length of the video, from ${minDurationSeconds} to ${maxDurationSeconds} seconds`,
		typeOptions: { minValue: minDurationSeconds, maxValue: maxDurationSeconds, numberPrecision: 0 },
	},
	{
		displayName: 'Wait for Completion',
		name: 'waitMode',
		type: 'options',
		noDataExpression: true,
		default: 'poll',
		description: 'Whether the node returns at once with the queued job, or waits for the finished video',
		options: [
			{
				name: "Don't Wait",
				value: 'dontWait',
				description: 'Return the queued job at once; use Get Job or the Omni Video Trigger later',
			},
			{
				name: 'Poll',
				value: 'poll',
				description: 'Wait inside this node, checking the job as rarely as possible (about once when the video is expected)',
			},
			{
				name: 'Wait for Callback',
				value: 'callback',
				description: 'Pause the execution and resume when Omni Video calls back; costs no lookups while waiting. Needs n8n reachable over HTTPS.',
			},
		],
	},
	{
		displayName:
			'Omni Video must reach this n8n\'s resume URL over public https:// (set N8N_WEBHOOK_URL, or WEBHOOK_URL on n8n 1.x); otherwise the node polls instead and says why on each item. The node resumes once every item\'s job has ended, with one item per input item; a failed job gives an item with status "failed".',
		name: 'callbackNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: { waitMode: ['callback'] } },
	},
	{
		displayName: 'Timeout (Minutes)',
		name: 'timeoutMinutes',
		type: 'number',
		default: 10,
		description: 'Stop waiting after this long; the job goes on and its ID is in the error so that Get Job can pick it up',
		typeOptions: { minValue: 1 },
		displayOptions: { show: { waitMode: ['poll'] } },
	},
	{
		displayName: 'Limit Wait Time (Minutes)',
		name: 'callbackTimeoutMinutes',
		type: 'number',
		default: 60,
		description: 'The longest the execution waits for callbacks; it stops sooner, 5 minutes after every job should have ended (at least 90 s a round of jobs). Then each item goes on with an omniVideo field naming its job and saying its outcome is unknown: read it with Get Job.',
		typeOptions: { minValue: 1 },
		displayOptions: { show: { waitMode: ['callback'] } },
	},
	{
		displayName: 'Download Video',
		name: 'download',
		type: 'boolean',
		default: false,
		description: 'Whether to add the video file as binary data (result URLs may expire); the URLs are always in the JSON',
		hint: 'For large videos, set N8N_DEFAULT_BINARY_DATA_MODE to filesystem (database or s3 in queue mode)',
		displayOptions: { show: { waitMode: ['poll', 'callback'] } },
	},
	{ ...videoFieldProperty, displayOptions: { show: { waitMode: ['poll', 'callback'], download: [true] } } },
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [
			{
				displayName: 'Callback URL',
				name: 'callbackUrl',
				type: 'string',
				default: '',
				placeholder: 'e.g. https://your-n8n.example.com/webhook/omni-video',
				description: 'An https:// URL that Omni Video calls when the job is done or failed, such as the URL of an Omni Video Trigger node',
				hint: 'Not used with Wait for Callback, which passes this node\'s own resume URL',
			},
			{
				displayName: 'Expected Render Time (Seconds)',
				name: 'expectedRenderSeconds',
				type: 'number',
				default: 0,
				typeOptions: { minValue: 0 },
				description: 'How long your jobs usually take; 0 estimates it from resolution and duration (30–90 s). The node first looks at the job then.',
			},
			{
				displayName: 'Retry Failed Jobs',
				name: 'retryFailedJobs',
				type: 'boolean',
				default: false,
				description: 'Whether a retried run makes a job again when the job it made before failed. Off, that item fails again with the same job (the same prompt usually fails the same way) and no new charge.',
			},
			{
				displayName: 'Reuse a Job Made From the Same Input (Hours)',
				name: 'reuseHours',
				type: 'number',
				default: 0,
				typeOptions: { minValue: 0, maxValue: 24 },
				description: 'Above 0, a run of this node in any execution whose item has the same input as one made within this many hours gets that job back instead of paying for a new one (from a manual run in the editor only where the service replays the request: n8n saves our records only for production runs). 0: a new execution makes new videos; n8n\'s own retries always get the jobs already made.',
				hint: 'At most 24: Omni Video remembers a request for 24 hours',
			},
			{
				displayName: 'Row Key',
				name: 'rowKey',
				type: 'string',
				default: '',
				description: 'What names this item\'s row in your table, such as its ID: any production execution that gets the same row with the same input gets the job already made for it (looked up, not paid again), for 24 hours. Leave empty when items are not rows of a table.',
				hint: 'A changed prompt, resolution or duration is a new job; a row whose job failed is made again only with Retry Failed Jobs',
			},
		],
	},
];

export const description = updateDisplayOptions({ show: { resource: ['video'], operation: ['generate'] } }, properties);

/**
 * Generate Video: Wait for Callback parks the batch, making its rows as jobs end (see waitForCallback.ts); Don't Wait and
 * Poll run every item at once. As an AI agent's tool, whose call must answer in one go, Wait for
 * Callback polls instead of parking.
 */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	if (this.getNodeParameter('waitMode', 0) === 'callback' && !isToolExecution(this)) {
		let fallback = await callbackFallback(this);
		// A parked batch's next step (after a callback or its wait time), on whatever process runs it.
		if (!fallback && isContinuation(this)) {
			const next = await continueForCallbacks.call(this);
			if (next) return next;
		}
		if (!fallback) {
			const parked = await parkForCallbacks.call(this);
			if (Array.isArray(parked)) return parked;
			fallback = parked;
		}
		const polling = fallback;
		return await forEachItem(this, async function (itemIndex) {
			return await generateItem.call(this, itemIndex, polling);
		});
	}
	return await forEachItem(this, generateItem);
}

/**
 * Generate Video for one item in Don't Wait or Poll mode, or in Wait for Callback's place when
 * n8n cannot be called back (`callbackSkipped` says why; the item says it waited by polling).
 */
async function generateItem(this: IExecuteFunctions, itemIndex: number, fallback?: CallbackFallback): Promise<INodeExecutionData[]> {
	const polling = fallback !== undefined;
	const { created, client, extra: createdExtra } = await createItemJob.call(this, itemIndex, {
		watched: polling ? true : undefined,
		callbackUrl: fallback?.callbackUrl,
	});
	const extra = polling ? { ...createdExtra, waitedBy: 'polling', callbackSkipped: fallback.callbackSkipped } : createdExtra;
	if (this.getNodeParameter('waitMode', 0) === 'dontWait') {
		return [{ json: jobJson(created.job, extra), pairedItem: { item: itemIndex } }];
	}
	const timeoutMinutes = polling
		? (this.getNodeParameter('callbackTimeoutMinutes', itemIndex, 60) as number)
		: (this.getNodeParameter('timeoutMinutes', itemIndex, 10) as number);
	// A job made by an earlier run (a retry) may have ended already: nothing to wait for.
	if (created.job.status === 'failed') throw jobFailedError(created.job);
	const job = isTerminal(created.job)
		? created.job
		: await client.waitForJob(created.job.id, {
				expectedMs: created.expectedMs,
				timeoutMs: timeoutMinutes * 60_000,
				signal: this.getExecutionCancelSignal(),
			});
	return [await jobItem(this, job, { field: videoField(this, itemIndex), itemIndex, extra })];
}
