import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';
import { derivedIdempotencyKey, type GenerateVideoInput } from '../../../../core';
import { isLocalSandbox, omniVideoClient } from '../../../shared/n8nHost';
import { downloadVideo, jobJson } from '../../../shared/jobOutput';
import { uploadFromBinary } from '../image/upload.operation';

const properties: INodeProperties[] = [
	{
		displayName: 'Prompt',
		name: 'prompt',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. A paper boat sailing down a rainy street at dusk, cinematic',
		description: 'What the video should show, in up to 2000 characters',
		typeOptions: { rows: 4 },
	},
	{
		displayName: 'Source',
		name: 'source',
		type: 'options',
		default: 'none',
		description: 'What the video starts from: only the prompt, an image to animate, or footage to transform',
		options: [
			{ name: 'Prompt Only (Text to Video)', value: 'none' },
			{ name: 'Image URL (Image to Video)', value: 'imageUrl' },
			{ name: 'Video URL (Video to Video)', value: 'videoUrl' },
			{ name: 'Image From Input Binary (Uploaded First)', value: 'binaryImage' },
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
		default: '1080P',
		description: 'Higher resolutions cost more credits and take longer',
		options: [
			{ name: '720P', value: '720P' },
			{ name: '1080P', value: '1080P' },
			{ name: '4K', value: '4K' },
		],
	},
	{
		displayName: 'Duration (Seconds)',
		name: 'duration',
		type: 'number',
		default: 8,
		description: 'Length of the video, from 4 to 10 seconds',
		typeOptions: { minValue: 4, maxValue: 10, numberPrecision: 0 },
	},
	{
		displayName: 'Wait for Completion',
		name: 'waitMode',
		type: 'options',
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
		],
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
		displayName: 'Download Video',
		name: 'download',
		type: 'boolean',
		default: false,
		description: 'Whether to add the video file as binary data (result URLs may expire); the URLs are always in the JSON',
		displayOptions: { show: { waitMode: ['poll'] } },
	},
	{
		displayName: 'Put Video in Field',
		name: 'outputBinaryPropertyName',
		type: 'string',
		default: 'video',
		hint: 'The name of the output binary field for the video file',
		displayOptions: { show: { waitMode: ['poll'], download: [true] } },
	},
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
			},
		],
	},
];

export const description = updateDisplayOptions({ show: { resource: ['video'], operation: ['generate'] } }, properties);

/** Generate Video for one item: validate, create once (with a stable idempotency key), optionally wait and download. */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<INodeExecutionData[]> {
	const { client, baseUrl } = await omniVideoClient(this);
	const source = this.getNodeParameter('source', itemIndex) as string;
	const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const input: GenerateVideoInput = {
		prompt: this.getNodeParameter('prompt', itemIndex) as string,
		resolution: this.getNodeParameter('resolution', itemIndex) as string,
		duration: this.getNodeParameter('duration', itemIndex) as number,
		callbackUrl: (options.callbackUrl as string) || undefined,
	};
	if (source === 'imageUrl') input.imageUrl = this.getNodeParameter('imageUrl', itemIndex) as string;
	if (source === 'videoUrl') input.videoUrl = this.getNodeParameter('videoUrl', itemIndex) as string;
	if (source === 'binaryImage') {
		input.imageUrl = (await uploadFromBinary.call(this, client, itemIndex, this.getNodeParameter('binaryPropertyName', itemIndex) as string)).fileUrl;
	}
	// Same run, same item, same input → same key: n8n's "Retry On Fail" gets the original job back.
	const idempotencyKey = derivedIdempotencyKey(this.getExecutionId(), this.getNode().id, itemIndex, JSON.stringify(input));
	const signal = this.getExecutionCancelSignal();
	const created = await client.generateVideo(input, {
		idempotencyKey,
		signal,
		allowInsecureLoopbackCallback: isLocalSandbox(baseUrl),
	});
	const extra: IDataObject = { mode: created.mode, idempotencyKey: created.idempotencyKey };
	const waitMode = this.getNodeParameter('waitMode', itemIndex) as string;
	if (waitMode === 'dontWait') return [{ json: jobJson(created.job, extra), pairedItem: { item: itemIndex } }];

	const timeoutMinutes = this.getNodeParameter('timeoutMinutes', itemIndex, 10) as number;
	const job = await client.waitForJob(created.job.id, { expectedMs: created.expectedMs, timeoutMs: timeoutMinutes * 60_000, signal });
	const item: INodeExecutionData = { json: jobJson(job, extra), pairedItem: { item: itemIndex } };
	if (this.getNodeParameter('download', itemIndex, false) as boolean) {
		const field = this.getNodeParameter('outputBinaryPropertyName', itemIndex, 'video') as string;
		item.binary = { [field]: await downloadVideo(this, job) };
	}
	return [item];
}
