/* eslint-disable @n8n/community-nodes/no-restricted-imports -- the Activepieces piece: n8n's rules for community nodes do not apply to it */
import { createTrigger, Property, TriggerStrategy, type FilesService } from '@activepieces/pieces-framework';
import { DeliveryGuard, SAMPLE_JOB, claimedOutcomeKey, jobView, type CallbackOutcome, type JobRecord } from '../../../core';
import { omniVideoAuth } from '../auth';
import { connectionOf, inStepTerms, omniVideoClient, stepError } from '../host';
import { includeVideoFileProp, jobOutput } from '../job';
import { claimOutcome } from './outcome-claim';

const SAMPLE = { ...jobView(SAMPLE_JOB), confirmedBy: 'signature', deliveryId: 'msg_2f1c0b9e' };

/**
 * One guard per engine process: copies arriving at one process wait for each other's verdict; the
 * flow's store (claimOutcome) does the same between processes, as Activepieces runs each webhook
 * in a process of its own.
 */
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
				"This trigger's webhook URL:\n\n```text\n{{webhookUrl}}\n```\n\nCopy it into the **Callback URL** of a Generate Video step set to *Don't wait* (in another flow), or send it as `callbackUrl` when you create jobs from your own code. Omni Video must reach it over https://. Each finished job starts this flow once.",
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
	 * other (the guard in this process, a claim in the flow's store across processes), so the
	 * store's mark is never read by two of them before it is set. A signed callback older than the
	 * signature's 300 s is confirmed by lookup, not refused: Activepieces answers the service before
	 * the trigger runs, so a callback held in its queue past that is never delivered again.
	 */
	async run(ctx) {
		return inStepTerms(async () => {
			const connection = connectionOf(ctx.auth);
			const { client } = omniVideoClient(connection);
			const request = {
				headers: ctx.payload.headers,
				rawBody: rawBodyOf(ctx.payload),
				secret: connection.webhookSecret?.trim() || undefined,
				confirmStaleByLookup: true,
			};
			// A body that names no job and status is no callback of Omni Video: nothing starts.
			const claim = claimedOutcomeKey(request.rawBody);
			if (!claim) return [];
			const seenKey = (outcome: string) => `omni-video:outcome:${outcome}`;
			const guarded = await deliveries.admit(`${ctx.flows.current.id}:${claim}`, Date.now(), async () => {
				// Replays after the engine restarted, and copies in other processes, are caught by the flow's store.
				const claimed = await claimOutcome(ctx.store, { claimKey: `omni-video:claim:${claim}`, seenKey: seenKey(claim) }, async () => {
					const outcome = await client.handleCallback(request);
					if (!outcome.accepted) return { taken: false, value: refusal(outcome) };
					const { job } = outcome;
					// The job's own outcome, when the body claimed another: marked too, so its true callback starts nothing more.
					const confirmed = `${job.id}:${job.status}`;
					if (confirmed !== claim) {
						if (await ctx.store.get(seenKey(confirmed))) return { taken: true, value: [] };
						await ctx.store.put(seenKey(confirmed), true);
					}
					const wanted = ctx.propsValue.outcome ?? 'any';
					if (wanted !== 'any' && job.status !== wanted) return { taken: true, value: [] };
					const files = ctx.propsValue.includeVideoFile ? ctx.files : undefined;
					return { taken: true, value: [await startedOutput(job, files, { confirmedBy: outcome.confirmedBy, deliveryId: outcome.deliveryId })] };
				});
				return claimed.duplicate ? { taken: true, value: [] } : { taken: claimed.taken, value: claimed.value };
			});
			return guarded.duplicate ? [] : guarded.value;
		});
	},
	// The API cannot list finished jobs: the builder's test shows what a delivery looks like.
	async test() {
		return [SAMPLE];
	},
});
