/* eslint-disable @n8n/community-nodes/no-restricted-imports -- the Activepieces piece: n8n's rules for community nodes do not apply to it */
import { createTrigger, Property, TriggerStrategy, type FilesService } from '@activepieces/pieces-framework';
import { DeliveryGuard, SAMPLE_JOB, claimedOutcomeKey, jobView, type CallbackOutcome, type JobRecord } from '../../../core';
import { omniVideoAuth } from '../auth';
import { connectionOf, inStepTerms, omniVideoClient, stepError } from '../host';
import { includeVideoFileProp, jobOutput } from '../job';

const SAMPLE = { ...jobView(SAMPLE_JOB), confirmedBy: 'signature', deliveryId: 'msg_2f1c0b9e' };

/** One guard per engine process: every delivery to a Job Completed trigger of the process passes it. */
const deliveries = new DeliveryGuard();

/** The body exactly as sent (the signature covers these bytes), when Activepieces kept it. */
function rawBodyOf(payload: { body: unknown; rawBody?: unknown }): string {
	if (typeof payload.rawBody === 'string') return payload.rawBody;
	if (Buffer.isBuffer(payload.rawBody)) return payload.rawBody.toString('utf8');
	return JSON.stringify(payload.body ?? {});
}

/**
 * A callback Activepieces already answered (it answers a webhook before the flow runs), so a
 * refused one cannot be sent back: the flow just does not start. Only a callback that could not
 * be confirmed in time fails the trigger, so that the run history shows the job to look up.
 */
function refusal(outcome: Extract<CallbackOutcome, { accepted: false }>): never[] {
	if (outcome.status === 503) {
		throw new Error(`Omni Video callback not confirmed: ${outcome.reason} Look the job up with Get Job.`);
	}
	return [];
}

/** The flow starts even when the video cannot be downloaded (the delivery is marked seen): its URL is in the output. */
async function startedOutput(job: JobRecord, files: FilesService | undefined, extra: Record<string, unknown>) {
	try {
		return await jobOutput(job, { files, extra });
	} catch (error) {
		return jobOutput(job, { extra: { ...extra, videoFileSkipped: String((stepError(error) as Error)?.message ?? error) } });
	}
}

export const jobCompleted = createTrigger({
	auth: omniVideoAuth,
	name: 'job_completed',
	displayName: 'Job Completed',
	description: "Starts the flow when an Omni Video job finishes or fails, for jobs created with this trigger's webhook URL as their Callback URL.",
	type: TriggerStrategy.WEBHOOK,
	props: {
		instructions: Property.MarkDown({
			value:
				"Copy this trigger's webhook URL into the **Callback URL** of a Generate Video step set to *Don't wait* (in another flow), or send it as `callbackUrl` when you create jobs from your own code. Omni Video must reach it over https://. Each finished job starts this flow once.",
		}),
		outcome: Property.StaticDropdown({
			displayName: 'Outcome',
			description: 'Which finished jobs start the flow.',
			required: false,
			defaultValue: 'any',
			options: {
				options: [
					{ label: 'Done or failed', value: 'any' },
					{ label: 'Done only', value: 'done' satisfies JobRecord['status'] },
					{ label: 'Failed only', value: 'failed' satisfies JobRecord['status'] },
				],
			},
		}),
		includeVideoFile: includeVideoFileProp,
	},
	sampleData: SAMPLE,
	// The URL is given to Omni Video per job, not registered with it: nothing to set up or remove.
	async onEnable() {
		return;
	},
	async onDisable() {
		return;
	},
	/**
	 * Starts the flow only for a callback that is real (signed with the connection's secret, or
	 * confirmed by looking the job up with its key), of the chosen outcome, and new. The service
	 * delivers again until answered, and replays happen, some with a new webhook id: what counts is
	 * the outcome claimed (job and status). Copies arriving together are checked one after the
	 * other (the guard), so the flow's store mark is never read by two of them before it is set.
	 */
	async run(ctx) {
		return inStepTerms(async () => {
			const connection = connectionOf(ctx.auth);
			const { client } = omniVideoClient(connection);
			const request = { headers: ctx.payload.headers, rawBody: rawBodyOf(ctx.payload), secret: connection.webhookSecret?.trim() || undefined };
			const claim = claimedOutcomeKey(request.rawBody) ?? 'unreadable';
			const guarded = await deliveries.admit(`${ctx.flows.current.id}:${claim}`, Date.now(), async () => {
				const outcome = await client.handleCallback(request);
				if (!outcome.accepted) return { taken: false, value: refusal(outcome) };
				const { job } = outcome;
				const wanted = ctx.propsValue.outcome ?? 'any';
				if (wanted !== 'any' && job.status !== wanted) return { taken: true, value: [] };
				// Replays after the engine restarted are caught by the flow's store.
				const seenKey = `omni-video:outcome:${job.id}:${job.status}`;
				if (await ctx.store.get(seenKey)) return { taken: true, value: [] };
				await ctx.store.put(seenKey, true);
				const files = ctx.propsValue.includeVideoFile ? ctx.files : undefined;
				return { taken: true, value: [await startedOutput(job, files, { confirmedBy: outcome.confirmedBy, deliveryId: outcome.deliveryId })] };
			});
			return guarded.duplicate ? [] : guarded.value;
		});
	},
	// The API cannot list finished jobs: the builder's test shows what a delivery looks like.
	async test() {
		return [SAMPLE];
	},
});
