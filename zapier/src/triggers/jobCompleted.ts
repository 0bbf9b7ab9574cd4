/* eslint-disable @n8n/community-nodes/no-restricted-imports -- the Zapier app: n8n's rules for community nodes do not apply to it */
import { defineTrigger, type Bundle, type ZObject } from 'zapier-platform-core';
import { asZapierErrors } from '../errors';
import { omniVideoClient } from '../host';
import { JOB_OUTPUT_FIELDS, JOB_SAMPLE, jobOutput, type JobOutput } from '../job';
import { INCLUDE_VIDEO_FILE_FIELD, videoFileHydrator } from '../files';

/** How long a delivery is remembered: longer than Omni Video retries a callback. */
const DELIVERY_MEMORY_SECONDS = 7 * 24 * 3600;

/** Zapier hands over a hook's headers as `Http-Webhook-Id` and the like: back to HTTP's names. */
export function hookHeaders(raw: Record<string, string> | undefined): Record<string, string> {
	const headers: Record<string, string> = {};
	for (const [name, value] of Object.entries(raw ?? {})) headers[name.toLowerCase().replace(/^http-/, '')] = value;
	return headers;
}

/** True the first time a delivery is seen; a replay of it (same id) is false. */
async function firstDelivery(z: ZObject, deliveryId: string): Promise<boolean> {
	const key = `omni-video:delivery:${deliveryId}`;
	if (await z.cache.get(key)) return false;
	// nx: only one of two concurrent deliveries of the same callback wins.
	return (await z.cache.set(key, true, DELIVERY_MEMORY_SECONDS, ['auth'], true)) !== false;
}

/**
 * One callback from Omni Video. It starts the Zap only when it is real (signed with the
 * connection's secret, or confirmed by looking the job up with the connection's key), the job has
 * ended the way the trigger asks for, and this delivery was not seen before.
 */
async function perform(z: ZObject, bundle: Bundle<{ outcome?: string; includeVideoFile?: boolean }>): Promise<JobOutput[]> {
	return asZapierErrors(z, async () => {
		const { client } = omniVideoClient(z, bundle);
		const rawBody =
			typeof bundle.rawRequest?.content === 'string' ? bundle.rawRequest.content : JSON.stringify(bundle.cleanedRequest ?? {});
		const outcome = await client.handleCallback({
			headers: hookHeaders(bundle.rawRequest?.headers),
			rawBody,
			secret: String(bundle.authData.webhookSecret ?? '').trim() || undefined,
		});
		if (!outcome.accepted) {
			z.console.log(`Callback ignored: ${outcome.reason}`);
			return [];
		}
		const wanted = bundle.inputData.outcome ?? 'any';
		if (wanted !== 'any' && outcome.job.status !== wanted) return [];
		if (!(await firstDelivery(z, outcome.deliveryId))) {
			z.console.log(`Callback ignored: delivery ${outcome.deliveryId} was already handled.`);
			return [];
		}
		const extra: Record<string, unknown> = { confirmedBy: outcome.confirmedBy, deliveryId: outcome.deliveryId };
		const includeFile = String(bundle.inputData.includeVideoFile) === 'true';
		if (includeFile && outcome.job.status === 'done' && outcome.job.resultUrls[0]) {
			extra.videoFile = z.dehydrateFile(videoFileHydrator, { url: outcome.job.resultUrls[0] });
		}
		return [jobOutput(outcome.job, extra)];
	});
}

export default defineTrigger({
	key: 'jobCompleted',
	noun: 'Job',
	display: {
		label: 'Job Completed',
		description: 'Triggers when an Omni Video job whose Callback URL is this trigger\'s webhook URL finishes or fails.',
		directions:
			'Copy the webhook URL shown below and send it as `callbackUrl` when you create jobs outside this Zap (your own code, another tool). ' +
			'Zapier allows such fixed webhook URLs only in private integrations: in a public one, use Generate Video, which waits for its own job.',
	},
	operation: {
		type: 'hook' as const,
		perform,
		inputFields: [
			{
				key: 'outcome',
				label: 'Outcome',
				type: 'string' as const,
				required: false,
				default: 'any',
				choices: [
					{ value: 'any', label: 'Done or failed', sample: 'any' },
					{ value: 'done', label: 'Done only', sample: 'done' },
					{ value: 'failed', label: 'Failed only', sample: 'failed' },
				],
				helpText: 'Which finished jobs start the Zap.',
			},
			INCLUDE_VIDEO_FILE_FIELD,
		],
		outputFields: [
			...JOB_OUTPUT_FIELDS,
			{ key: 'confirmedBy', label: 'Confirmed By (signature or lookup)', type: 'string' as const },
			{ key: 'deliveryId', label: 'Delivery ID', type: 'string' as const },
			{ key: 'videoFile', label: 'Video File', type: 'file' as const },
		],
		sample: { ...JOB_SAMPLE, confirmedBy: 'lookup', deliveryId: 'job_8f3a2c1d9e7b4a60:done' },
	},
});
