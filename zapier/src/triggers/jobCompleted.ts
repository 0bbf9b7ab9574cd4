import { defineTrigger, type Bundle, type ZObject } from 'zapier-platform-core';
import { asZapierErrors } from '../errors';
import { CONNECTION_SCOPE, connectionCache } from '../cache';
import { omniVideoClient } from '../host';
import { JOB_OUTPUT_FIELDS, JOB_SAMPLE, jobOutput, type JobOutput } from '../job';
import { INCLUDE_VIDEO_FILE_FIELD, VIDEO_FILE_OUTPUT_FIELD, videoFileOutput } from '../files';

/** How long a delivery is remembered: longer than Omni Video retries a callback. */
const DELIVERY_MEMORY_SECONDS = 7 * 24 * 3600;

const JOB_COMPLETED_SAMPLE: JobOutput = { ...JOB_SAMPLE, confirmedBy: 'lookup', deliveryId: 'job_8f3a2c1d9e7b4a60:done' };

/** Zapier hands over a hook's headers as `Http-Webhook-Id` and the like: back to HTTP's names. */
export function hookHeaders(raw: Record<string, string> | undefined): Record<string, string> {
	const headers: Record<string, string> = {};
	for (const [name, value] of Object.entries(raw ?? {})) headers[name.toLowerCase().replace(/^http-/, '')] = value;
	return headers;
}

/**
 * True the first time a delivery is seen; a replay of it (same id) is false. The read answers the
 * common case (a retry minutes later); the write with nx is the atomic part: of two concurrent
 * deliveries of one callback, only the one whose write creates the entry goes on.
 */
async function firstDelivery(z: ZObject, deliveryId: string): Promise<boolean> {
	const key = `omni-video:delivery:${deliveryId}`;
	const cache = connectionCache(z);
	if (await cache.get(key, CONNECTION_SCOPE)) return false;
	return (await cache.set(key, true, DELIVERY_MEMORY_SECONDS, CONNECTION_SCOPE, true)) !== false;
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
			// Halted, not silently dropped: the run shows in the Zap's history with the reason.
			const job = outcome.jobId ? ` (job ${outcome.jobId})` : '';
			throw new z.errors.HaltedError(`Omni Video callback not accepted${job}: ${outcome.reason}`);
		}
		const wanted = bundle.inputData.outcome ?? 'any';
		if (wanted !== 'any' && outcome.job.status !== wanted) return [];
		if (!(await firstDelivery(z, outcome.deliveryId))) {
			z.console.log(`Callback ignored: delivery ${outcome.deliveryId} was already handled.`);
			return [];
		}
		const includeFile = String(bundle.inputData.includeVideoFile) === 'true';
		const extra = { confirmedBy: outcome.confirmedBy, deliveryId: outcome.deliveryId, ...(includeFile ? videoFileOutput(z, outcome.job) : {}) };
		return [jobOutput(outcome.job, extra)];
	});
}

export default defineTrigger({
	key: 'jobCompleted',
	noun: 'Job',
	display: {
		label: 'Job Completed',
		description: 'Triggers when an Omni Video job finishes or fails, for jobs created with this trigger\'s webhook URL as their Callback URL.',
		directions:
			'Copy the webhook URL shown below. Paste it into the Callback URL of a Generate Video step set to Wait for the Video: No (in another Zap), ' +
			'or send it as `callbackUrl` when you create jobs from your own code. Each finished job starts this Zap once; callbacks that are not ' +
			'from Omni Video stop with a reason in the Zap history.',
	},
	operation: {
		type: 'hook' as const,
		perform,
		// The API cannot list finished jobs: the editor's test shows what a delivery looks like.
		performList: async (): Promise<JobOutput[]> => [JOB_COMPLETED_SAMPLE],
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
			VIDEO_FILE_OUTPUT_FIELD,
		],
		sample: JOB_COMPLETED_SAMPLE,
	},
});
