import { defineCreate, type Bundle, type ZObject } from 'zapier-platform-core';
import { OmniVideoError, RateLimitError, TimeoutError, jobFailedError, type GenerateVideoInput, type JobRecord, type OmniVideoClient } from '../../../core';
import { appError, appThrottle, asZapierErrors, happenedOnly } from '../errors';
import { omniVideoClient } from '../host';
import { jobOutput, type JobOutput } from '../job';
import { videoFileOutput } from '../files';
import { deadlineIn } from '../connection';
import { attemptEntry, attemptFor, attemptLedger, markDelivered, outcomeUnknownMessage, recallAttempt, replaySafeKey, type CreateAttempt } from '../replay';
import { GENERATE_VIDEO_INPUT_FIELDS, GENERATE_VIDEO_OUTPUT_FIELDS, GENERATE_VIDEO_SAMPLE, type GenerateInput } from './generateVideoFields';
import { blankToUndefined, isYes, prepareInput } from './generateVideoInput';

/** Polls end this long before the step's deadline, so that the last look has time to answer. */
const LAST_LOOK_MARGIN_MS = 3_000;
/** When a job from an earlier attempt is still rendering: look again after this long. */
const LOOK_AGAIN_SECONDS = 30;

/**
 * What perform hands to performResume (Zapier keeps it as `bundle.outputData`): the job, and the
 * attempt's record and where it is kept, to mark it delivered once the step ends well.
 */
type Submitted = JobOutput & { includeVideoFile?: boolean; attemptKey?: string; attempt?: CreateAttempt };

/** The job as the step's output, with the video as a file when asked for and ready. */
function finished(z: ZObject, job: JobRecord, submitted: Partial<Submitted>): JobOutput {
	const extra: Record<string, unknown> = {};
	for (const key of ['mode', 'submittedAt'] as const) if (submitted[key] !== undefined) extra[key] = submitted[key];
	return jobOutput(job, { ...extra, ...(submitted.includeVideoFile ? videoFileOutput(z, job) : {}) });
}

/** Polls until the step's deadline draws near; returns the job as it stands then, or throws if it failed. */
async function waitWithinRun(client: OmniVideoClient, job: JobRecord, expectedMs: number, deadlineAtMs: number): Promise<JobRecord> {
	const timeoutMs = deadlineAtMs - LAST_LOOK_MARGIN_MS - Date.now();
	if (job.status === 'done' || job.status === 'failed' || timeoutMs <= 0) return job;
	let latest = job;
	try {
		return await client.waitForJob(job.id, {
			timeoutMs,
			deadlineAtMs,
			// Look before the run ends even when the estimate is longer than the run may last.
			expectedMs: Math.min(expectedMs, timeoutMs / 2),
			onProgress: (seen) => {
				latest = seen;
			},
		});
	} catch (error) {
		// Out of time, or no room left in the plan's windows before the deadline: the job as last seen.
		if (error instanceof TimeoutError || error instanceof RateLimitError) return latest;
		throw error;
	}
}

/**
 * A job the step does not park for: returned as it stands when the step does not wait, else waited
 * for within the run. Still rendering then, the editor's sample shows it as it stands; a replay asks
 * Zapier to run the step again later (its callback went to the earlier run, which nobody waits on).
 */
async function pickUp(
	z: ZObject,
	client: OmniVideoClient,
	job: JobRecord,
	options: { waits: boolean; isSample: boolean; expectedMs: number; deadlineAtMs: number; submitted: Partial<Submitted> },
): Promise<JobOutput> {
	if (!options.waits) return finished(z, job, options.submitted);
	const latest = await waitWithinRun(client, job, options.expectedMs, options.deadlineAtMs);
	if (latest.status === 'failed') throw jobFailedError(latest);
	if (latest.status === 'done' || options.isSample) return finished(z, latest, options.submitted);
	throw appThrottle(
		z,
		`Omni Video job ${job.id}, created by an earlier attempt of this step, is still ${latest.status}. ` +
			`Zapier runs this step again in ${LOOK_AGAIN_SECONDS} s to pick up the video; no second job is created.`,
		LOOK_AGAIN_SECONDS,
	);
}

/**
 * Creates the job once per input, replays included, through core's createVideoOnce with Zapier's
 * cache as its ledger (see replay.ts): a replay finds the attempt there and picks up the job it
 * made; when that attempt's outcome is unknown (its answer was lost), it sends nothing and says
 * what to check, since resending would pay twice on a service that ignores Idempotency-Key. Wait for the Video: Yes parks the step on Zapier's callback URL
 * (performResume); No returns the queued job at once; the editor's sample waits within the run.
 */
async function perform(z: ZObject, bundle: Bundle<GenerateInput>): Promise<JobOutput> {
	return asZapierErrors(z, async () => {
		const deadlineAtMs = deadlineIn();
		const fields = bundle.inputData;
		const { client, allowInsecureLoopbackCallback } = omniVideoClient(z, bundle);
		const includeVideoFile = isYes(fields.includeVideoFile);
		const isSample = Boolean(bundle.meta?.isLoadingSample);
		// The editor cannot resume a step: a sample always waits within the run instead.
		const waits = isSample || fields.waitForVideo === undefined || isYes(fields.waitForVideo);
		// One record per input (its base key), holding the latest generation: see attemptFor.
		const baseKey = replaySafeKey('generateVideo', bundle);
		const { idempotencyKey, generation, earlier } = attemptFor(baseKey, await recallAttempt(z, baseKey));
		const submittedAt = new Date().toISOString();
		const parks = waits && !isSample;
		// A replay takes what its earlier attempt sent: nothing is uploaded, no callback URL asked for.
		const input = earlier ? earlier.input : await inputToSend(z, client, fields, { waits, parks, allowInsecureLoopbackCallback, deadlineAtMs });
		const ledger = attemptLedger(z, baseKey, { input, generation }, earlier);
		let made;
		try {
			made = await client.createVideoOnce(input, { idempotencyKey, allowInsecureLoopbackCallback, deadlineAtMs, ledger, recorded: earlier ? (attemptEntry(earlier) ?? null) : null });
		} catch (error) {
			const lost = ledger.answerLostFor;
			if (lost && error instanceof OmniVideoError) throw appError(z, outcomeUnknownMessage(happenedOnly(error), lost, idempotencyKey, false), 'outcome_unknown');
			throw error;
		}
		if (!('created' in made)) {
			// Sent before, and no job recorded: whether it was made is unknown, so nothing is resent.
			throw appError(z, outcomeUnknownMessage('', ledger.attempt ?? { input, sentAt: new Date(made.sentAtMs).toISOString() }, idempotencyKey, true), 'outcome_unknown');
		}
		const { created } = made;
		const attempt: CreateAttempt = { ...(ledger.attempt ?? { input, generation }), jobId: created.job.id };
		const submitted = { mode: created.mode, submittedAt, includeVideoFile };
		if (made.outcome === 'made before') {
			z.console.log(`Replay: job ${created.job.id} was created by an earlier attempt of this step (idempotency key ${idempotencyKey}).`);
		} else if (parks) {
			return { ...jobOutput(created.job, { mode: created.mode, submittedAt }), includeVideoFile, attemptKey: baseKey, attempt } satisfies Submitted;
		}
		const output = await pickUp(z, client, created.job, { waits, isSample, expectedMs: made.outcome === 'made' ? created.expectedMs : 0, deadlineAtMs, submitted });
		await markDelivered(z, baseKey, attempt);
		return output;
	});
}

/**
 * The input of a create about to be sent: file fields uploaded, and Zapier's callback URL when the
 * step parks (asking for it is what parks the step, so only here).
 */
async function inputToSend(
	z: ZObject,
	client: OmniVideoClient,
	fields: GenerateInput,
	options: { waits: boolean; parks: boolean; allowInsecureLoopbackCallback: boolean; deadlineAtMs: number },
): Promise<GenerateVideoInput> {
	const { waits, parks, allowInsecureLoopbackCallback, deadlineAtMs } = options;
	const userCallback = waits ? undefined : blankToUndefined(fields.callbackUrl);
	const input = await prepareInput(z, client, fields, { allowInsecureLoopbackCallback, callbackUrl: userCallback, deadlineAtMs });
	if (parks) input.callbackUrl = z.generateCallbackUrl();
	return input;
}

/**
 * Runs when Omni Video calls the step's callback URL. The callback only says "look now": the
 * job is read with the connection's own key, so a forged or mistaken callback cannot change what
 * the step returns.
 */
async function performResume(z: ZObject, bundle: Bundle): Promise<JobOutput> {
	return asZapierErrors(z, async () => {
		const deadlineAtMs = deadlineIn();
		const submitted: Partial<Submitted> = bundle.outputData ?? {};
		const jobId = String(submitted.jobId ?? '');
		if (!jobId) throw new z.errors.Error('This step resumed without the job it created; run the Zap again.', 'missing_job', 500);
		const claimed = (bundle.cleanedRequest as { id?: unknown } | undefined)?.id;
		if (claimed !== undefined && claimed !== jobId) {
			z.console.log(`Callback named job ${String(claimed)}, this step waits for ${jobId}: reading ${jobId} instead.`);
		}
		const { client } = omniVideoClient(z, bundle);
		const job = await waitWithinRun(client, await client.getJob(jobId, { deadlineAtMs }), 0, deadlineAtMs);
		if (job.status === 'failed') throw jobFailedError(job);
		if (job.status !== 'done') {
			throw new z.errors.Error(
				`Omni Video called back, but job ${jobId} is still ${job.status}. Add a Find Job step later in the Zap (or a delay) to pick up the video.`,
				'job_not_finished',
			);
		}
		const output = finished(z, job, submitted);
		if (submitted.attemptKey && submitted.attempt) await markDelivered(z, submitted.attemptKey, submitted.attempt);
		return output;
	});
}

export default defineCreate({
	key: 'generateVideo',
	noun: 'Video',
	display: {
		label: 'Generate Video',
		description: 'Creates a video from a prompt, and optionally an image or a video, and waits until it is ready (or returns the queued job at once).',
	},
	operation: {
		perform,
		performResume,
		// Zapier's throttles cannot vary by plan: they fit Pro (5 jobs at once; with Upload Image and
		// Find Job at 10 a minute each, 30 requests a minute). Premium's extra room and the hour
		// windows are kept by the app's own limiter and the service, as throttled retries.
		throttle: { window: 60, limit: 5, scope: ['auth' as const] },
		inputFields: GENERATE_VIDEO_INPUT_FIELDS,
		outputFields: GENERATE_VIDEO_OUTPUT_FIELDS,
		sample: GENERATE_VIDEO_SAMPLE,
	},
});
