import type {
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';
import { omniVideoClient } from '../shared/n8nHost';
import { jobItem, jobJson, videoField, videoFieldProperty } from '../shared/jobOutput';
import { callbackRequestOf, perJobWebhookMethods, respond, respondRefused } from '../shared/webhookRequest';
import { DeliveryGuard, claimedOutcomeKey, verifyWebhookSignature, type CallbackRequest, type JobRecord } from '../../core';
import { rememberDelivery } from './deliveryLog';
import { omniVideoCredentials, omniVideoIcon, outcomeWebhook } from '../shared/nodeDescription';

export class OmniVideoTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Omni Video Trigger',
		name: 'omniVideoTrigger',
		icon: omniVideoIcon,
		group: ['trigger'],
		version: 1,
		subtitle: '={{ "On job " + ($parameter["events"] === "any" ? "done or failed" : $parameter["events"]) }}',
		// n8n's nodes panel merges this trigger into the Omni Video node (one entry for the app, in
		// both panels) and shows the trigger's description as the entry's: on n8n 2.41 under the
		// node's name on its page. So it is the node's own sentence; what the trigger does, its name
		// and its "On job …" choices say (test/n8n/nodesPanel.test.ts, test/e2e/browser.ts).
		description: 'Generate videos from a prompt, an image or footage with Omni Video',
		defaults: { name: 'Omni Video Trigger' },
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: omniVideoCredentials,
		webhooks: [outcomeWebhook({ path: 'omni-video' })],
		properties: [
			{
				displayName:
					'Paste this node\'s Production URL (above) into the Callback URL option of Omni Video\'s Generate operation, then activate the workflow. Omni Video must reach n8n over HTTPS (set N8N_WEBHOOK_URL, or WEBHOOK_URL on n8n 1.x).',
				name: 'setupNotice',
				type: 'notice',
				default: '',
			},
			{
				displayName: 'Trigger On',
				name: 'events',
				type: 'options',
				default: 'any',
				description: 'Which job outcomes start the workflow; other callbacks are answered and ignored',
				options: [
					{ name: 'Job Done', value: 'done' },
					{ name: 'Job Done or Failed', value: 'any' },
					{ name: 'Job Failed', value: 'failed' },
				],
			},
			{
				displayName: 'Download Video',
				name: 'download',
				type: 'boolean',
				default: false,
				description: 'Whether to add the finished video as binary data (result URLs may expire); the URLs are always in the JSON',
			},
			videoFieldProperty,
		],
	};

	webhookMethods = perJobWebhookMethods;

	/**
	 * A callback only starts the workflow once it is confirmed (a valid signature when the
	 * credential has a signing secret, else the job re-read with our own key), wanted, and new:
	 * forged calls and repeated deliveries are answered but start nothing. Copies that arrive
	 * together are checked one after the other, so only one of them can start the workflow.
	 */
	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		const { client, credentials } = await omniVideoClient(this);
		const request = callbackRequestOf(this, credentials);
		// A forged delivery is refused as forged (401) even when it copies an outcome delivered before.
		const signature = request.secret ? checkSignature(request, client.runtime.clock.now()) : undefined;
		if (signature && !signature.ok) return respond(this, 401, { error: `Signature rejected: ${signature.reason}` });
		const claim = claimedOutcomeKey(request.rawBody) ?? 'unreadable';
		const guardKey = `${this.getWorkflow().id ?? ''}:${this.getNode().id}:${claim}`;
		const guarded = await deliveries.admit(guardKey, Date.now(), async () => {
			const outcome = await client.handleCallback(request);
			if (!outcome.accepted) return { taken: false, value: respondRefused(this, outcome) };
			const { job } = outcome;
			const events = this.getNodeParameter('events', 'any') as string;
			if (events !== 'any' && events !== job.status) {
				return { taken: true, value: respond(this, 200, { received: true, started: false, reason: `Job ${job.id} is ${job.status}` }) };
			}
			// Replays after a restart are caught by the workflow's saved static data.
			if (!rememberDelivery(this.getWorkflowStaticData('node'), `${job.id}:${job.status}`, Date.now())) {
				return { taken: true, value: respond(this, 200, { received: true, started: false, reason: 'Already delivered' }) };
			}
			// Answer before downloading: the service waits at most 15 s for a callback's answer.
			respond(this, 200, { received: true, started: true });
			return { taken: true, value: await startedItem(this, job, outcome.confirmedBy) };
		});
		if (guarded.duplicate) return respond(this, 200, { received: true, started: false, reason: 'Already delivered' });
		return guarded.value;
	}
}

/** Standard Webhooks check of a signed delivery (core checks it again, at no cost, when handling it). */
function checkSignature(request: CallbackRequest, nowMs: number) {
	return verifyWebhookSignature({ secret: request.secret!, headers: request.headers, rawBody: request.rawBody, nowMs });
}

/** One guard per process: n8n runs every trigger webhook of a process in this module. */
const deliveries = new DeliveryGuard();

async function startedItem(context: IWebhookFunctions, job: JobRecord, confirmedBy: string): Promise<IWebhookResponseData> {
	const extra = { confirmedBy };
	let item: INodeExecutionData;
	try {
		item = await jobItem(context, job, { field: videoField(context), extra });
	} catch (error) {
		// The workflow still starts: the URLs are in the JSON and can be fetched later.
		item = { json: jobJson(job, { ...extra, downloadError: error instanceof Error ? error.message : String(error) }) };
	}
	return { noWebhookResponse: true, workflowData: [[item]] };
}
