import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';
import * as video from './actions/video';
import * as job from './actions/job';
import * as image from './actions/image';
import { router } from './actions/router';
import { perJobWebhookMethods } from '../shared/webhookRequest';
import { omniVideoCredentials, omniVideoIcon, outcomeWebhook } from '../shared/nodeDescription';
import { errorJson, toNodeError } from '../shared/nodeErrors';

export class OmniVideo implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Omni Video',
		name: 'omniVideo',
		icon: omniVideoIcon,
		group: ['transform'],
		version: 1,
		subtitle: '={{ $parameter["operation"] + ": " + $parameter["resource"] }}',
		// Also the trigger's description: n8n shows the trigger's as the app's (OmniVideoTrigger.node.ts).
		description: 'Generate videos from a prompt, an image or footage with Omni Video',
		defaults: { name: 'Omni Video' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: omniVideoCredentials,
		// Wait for Callback: Omni Video calls this execution's resume URL with our own path
		// ($execution.resumeUrl + '/omni-video'): a Wait node's path is '', so neither takes the other's calls.
		webhooks: [outcomeWebhook({ path: video.RESUME_PATH, restartWebhook: true })],
		properties: [
			{
				displayName: 'Resource',
				name: 'resource',
				type: 'options',
				noDataExpression: true,
				default: 'video',
				options: [
					{ name: 'Image', value: 'image' },
					{ name: 'Job', value: 'job' },
					{ name: 'Video', value: 'video' },
				],
			},
			{
				displayName: 'Operation',
				name: 'operation',
				type: 'options',
				noDataExpression: true,
				displayOptions: { show: { resource: ['video'] } },
				default: 'generate',
				options: [
					{
						name: 'Generate',
						value: 'generate',
						action: 'Generate a video',
						description: 'Create a video from a prompt, an image or footage',
					},
				],
			},
			{
				displayName: 'Operation',
				name: 'operation',
				type: 'options',
				noDataExpression: true,
				displayOptions: { show: { resource: ['job'] } },
				default: 'get',
				options: [{ name: 'Get', value: 'get', action: 'Get a job', description: 'Look up a video job by its ID' }],
			},
			{
				displayName: 'Operation',
				name: 'operation',
				type: 'options',
				noDataExpression: true,
				displayOptions: { show: { resource: ['image'] } },
				default: 'upload',
				options: [
					{
						name: 'Upload',
						value: 'upload',
						action: 'Upload an image',
						description: 'Upload an image file for use as the source of a video',
					},
				],
			},
			...video.generate.description,
			...job.get.description,
			...image.upload.description,
		],
	};

	webhookMethods = perJobWebhookMethods;

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		try {
			return await router.call(this);
		} catch (error) {
			// An item's own error is an error item already (forEachItem, Wait for Callback's rows). What
			// reaches here failed the whole run (the operation, a parked batch's step): with Continue On
			// Fail every input item carries it. n8n itself would pass the input on unchanged, which the
			// error output ("Continue (using error output)") then takes for success.
			if (!this.continueOnFail()) throw toNodeError(this.getNode(), error);
			return [this.getInputData().map((_item, itemIndex) => ({ json: errorJson(error), pairedItem: { item: itemIndex } }))];
		}
	}

	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		// The only webhook of this node: a callback to a parked Generate (Wait for Callback).
		return video.resumeOnCallback.call(this);
	}
}
