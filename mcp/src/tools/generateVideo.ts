import { z } from 'zod';
import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import type { GenerateVideoRequest } from '../../../core/types';
import { CreateOutcomeUnknownError, GENERATE_LIMITS, validateGenerateInput, type CreateOutcome, type GenerateVideoInput, type GeneratedJob, type LedgerEntry } from '../../../core';
import type { Connection } from '../connection';
import type { Progress } from '../progress';
import { viewLink } from '../appView';
import type { ToolContext } from '../context';
import type { ToolCall } from '../toolCall';
import { runTool } from '../toolRun';
import { jobOutputShape, waitingForPlaceResult } from '../jobResult';
import { progressFor } from '../progress';
import { requestIdentity, type RequestIdentity } from '../requestKey';
import { boundedWait, MAX_WAIT_SECONDS } from '../settings';
import { SpendCapError } from '../spendCap';
import { waitWithin } from '../waitWithin';

const inputShape = {
	prompt: z.string().describe(`What the video shows, in up to ${GENERATE_LIMITS.maxPromptCharacters} characters.`),
	resolution: z.enum(GENERATE_LIMITS.resolutions).optional().describe('720P is fastest and cheapest, 4K slowest and dearest. Default 1080P.'),
	duration: z.number().optional().describe(`Seconds, ${GENERATE_LIMITS.minDurationSeconds} to ${GENERATE_LIMITS.maxDurationSeconds}. Default 8.`),
	imageUrl: z.string().optional().describe('An image to animate (image to video): a public URL, or the fileUrl upload_image returns.'),
	videoUrl: z.string().optional().describe('An MP4 to restyle (video to video). An image or a video, not both.'),
	waitSeconds: z.number().optional().describe(`How long this call waits for the video before answering with a receipt (0 to ${MAX_WAIT_SECONDS}; the server's default is usually 45, inside a 60 s client timeout).`),
	requestId: z.string().optional().describe('Your own id for this request: the same id with the same arguments always returns the same job, never a second video.'),
	newVideo: z.boolean().optional().describe('true: make another video even if the same arguments were sent in the last minutes. Leave it out when retrying a call that failed or timed out.'),
};

/**
 * However short the wait asked for, the create gets this long for its place and its answer: a
 * receipt with a job id is what a short wait is for, and a create seldom needs a second.
 */
const CREATE_FLOOR_MS = 5_000;

type Args = z.infer<z.ZodObject<typeof inputShape>>;

export function registerGenerateVideo(server: McpServer, context: ToolContext): void {
	server.registerTool(
		'generate_video',
		{
			title: 'Generate a video',
			description:
				'Makes a video with Omni Video from a prompt (text to video), an image (imageUrl) or footage (videoUrl). Costs credits. ' +
				`Waits up to waitSeconds (default ${context.settings.waitSeconds}) for the video: if it is ready, the result has videoUrl and a video/mp4 link; ` +
				'if not, a receipt (status queued/running, jobId, nextStep): then call wait_for_job or get_job with that jobId, never generate_video again. ' +
				`Calling again with the same arguments within ${context.settings.retryWindowMinutes} minutes (a retry after a timeout or lost answer) returns the same job and costs nothing more; ` +
				'set newVideo: true for a deliberate second video of the same arguments.',
			inputSchema: z.object(inputShape),
			outputSchema: z.object(jobOutputShape),
			annotations: { title: 'Generate a video', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
			_meta: viewLink,
		},
		(args, ctx) => runTool(context, ctx, 'generate_video', (call) => generate(context, args, call)),
	);
}

async function generate(context: ToolContext, args: Args, call: ToolCall): Promise<CallToolResult> {
	const startedMs = Date.now();
	const waitSeconds = boundedWait(args.waitSeconds, context.settings.waitSeconds);
	const deadlineMs = startedMs + waitSeconds * 1000;
	const untilMs = Math.max(deadlineMs, startedMs + CREATE_FLOOR_MS);
	const connection = context.connect(call);
	const input = { prompt: args.prompt, resolution: args.resolution, duration: args.duration, imageUrl: args.imageUrl, videoUrl: args.videoUrl, callbackUrl: connection.callbackUrl };
	// Refused here, with every field's problem, before anything is sent.
	const request = validateGenerateInput(input, { allowInsecureLoopbackCallback: connection.allowInsecureLoopbackCallback });
	// A team member's requests are their own: the same arguments from two members are two videos.
	const member = call.signedIn?.member;
	const identity = await requestIdentity(member ? `${connection.fingerprint}/member.${member.name}` : connection.fingerprint, request, {
		requestId: args.requestId?.trim() || undefined,
		newVideo: args.newVideo,
		retryWindowMs: context.settings.retryWindowMinutes * 60_000,
		read: (key) => context.ledger.read(key),
		nowMs: startedMs,
	});
	const progress = progressFor(call, waitSeconds);
	const receipt = () => waitingForPlaceResult(args, identity.requestId, (Date.now() - startedMs) / 1000);
	try {
		let recorded: LedgerEntry | null | undefined = identity.recorded;
		for (;;) {
			const made = await createWithin(context, connection, { input, request }, identity, recorded, call, progress, untilMs);
			if (!made) return receipt();
			if (!('created' in made)) {
				if (made.outcome === 'unknown') throw new CreateOutcomeUnknownError(made.idempotencyKey, made.sentAtMs);
				// Another call sends it: its job is noted as soon as it is answered.
				if (!(await answeredElsewhere(context, identity.idempotencyKey, untilMs, call.signal))) return receipt();
				recorded = undefined;
				continue;
			}
			const created = made.created;
			return await waitWithin(context, connection, call, { job: created.job, seenAtMs: created.seenAtMs, deadlineMs, retried: created.replayed, requestId: identity.requestId, progress });
		}
	} catch (error) {
		if (error instanceof SpendCapError) return { content: [{ type: 'text', text: error.message }], isError: true };
		throw error;
	} finally {
		progress.stop();
	}
}

/**
 * Creates once through core (which answers a create made before from our records, waits for the
 * plan's place and turn, claims the create in the shared ledger, sends it once and notes its job),
 * within `untilMs`; past it the create goes on and the same call picks it up.
 */
async function createWithin(
	context: ToolContext,
	connection: Connection,
	{ input, request }: { input: GenerateVideoInput; request: GenerateVideoRequest },
	identity: RequestIdentity,
	recorded: LedgerEntry | null | undefined,
	call: ToolCall,
	progress: Progress,
	untilMs: number,
): Promise<CreateOutcome | undefined> {
	// A retry is answered from our records: the cap counts only what a new video would add.
	const known = recorded !== null;
	const reservation = known ? { release: async () => undefined } : await context.spend.reserve(connection.fingerprint, request, call.signedIn?.member);
	progress.say(known ? 'Looking up the job an earlier identical call made' : "Waiting for a place among the plan's jobs at once");
	const creating = connection.client
		.createVideoOnce(input, {
			idempotencyKey: identity.idempotencyKey,
			validated: request,
			ledger: context.ledger,
			recorded,
			lastSeen: (jobId) => context.watches.lastSeen(connection.fingerprint, jobId),
			reuse: identity.reuse,
			// Cancelled, a create still waiting for its turn is dropped; one already sent is read to its answer and noted.
			signal: call.signal,
			finishOnceSent: true,
			watched: true,
			expectedMs: context.settings.expectedRenderSeconds === undefined ? undefined : context.settings.expectedRenderSeconds * 1000,
			allowInsecureLoopbackCallback: connection.allowInsecureLoopbackCallback,
		})
		.then(async (made) => {
			if ('created' in made && made.created.seenAtMs === undefined) await noteCreated(context, connection, call, made.created);
			return made;
		})
		.finally(() => reservation.release().catch(() => undefined));
	creating.catch(() => undefined);
	return await untilDeadline(creating, untilMs);
}

/**
 * A job made or looked up now: its spending, when it was seen, who made it, and its look schedule,
 * which runs from the create on, also when the call's bound came first: the job's end frees its
 * place among the plan's jobs for the creates waiting, whenever the agent asks again.
 */
async function noteCreated(context: ToolContext, connection: Connection, call: ToolCall, created: GeneratedJob): Promise<void> {
	const createdAtMs = createdAt(created);
	await Promise.all([
		context.spend.observe(connection.fingerprint, created.job, created.request),
		context.watches.seen(connection.fingerprint, created.job, { createdAtMs, expectedEndAtMs: createdAtMs + created.expectedMs }),
		...(created.replayed ? [] : [context.spend.observeMade(call.signedIn?.member, created.job, created.request), context.madeBy(call, created.job.id)]),
	]).catch(() => undefined);
	context.watches.watch(connection, created.job, { expectedMs: created.expectedMs, createdAtMs }).catch(() => undefined);
}

/**
 * Where the job's render time counts from: its create's answer, when this process sent it (this
 * call or another that the call joined in flight); a job an earlier create made is part way
 * through already, and half its time is the better guess.
 */
const createdAt = (created: GeneratedJob): number => created.answeredAtMs ?? Date.now() - created.expectedMs / 2;

/** Waits for another call's create to be settled: answered and noted, or its answer lost (true); until `untilMs` (false). */
async function answeredElsewhere(context: ToolContext, idempotencyKey: string, untilMs: number, signal: AbortSignal): Promise<boolean> {
	while (Date.now() < untilMs && !signal.aborted) {
		const entry = await context.ledger.find(idempotencyKey);
		if (!entry || 'jobId' in entry || !entry.pending) return true;
		await new Promise((resolve) => setTimeout(resolve, 250));
	}
	return false;
}

/** The create's outcome, or undefined when the deadline comes first (the create goes on). */
async function untilDeadline<T>(creating: Promise<T>, deadlineMs: number): Promise<T | undefined> {
	let timer: NodeJS.Timeout | undefined;
	const timeUp = new Promise<undefined>((resolve) => {
		timer = setTimeout(() => resolve(undefined), Math.max(0, deadlineMs - Date.now()));
	});
	try {
		return await Promise.race([creating, timeUp]);
	} finally {
		clearTimeout(timer);
	}
}
