import type { ApiRuntime } from '../http/apiRequest';
import { callApi, DEFAULT_RETRY_BUDGET_MS, isConcurrencyRefusal } from '../http/apiRequest';
import type { AbortSignalLike } from '../http/transport';
import type { GenerateVideoInput, GenerateVideoRequest, GenerationMode, JobRecord } from '../types';
import { generationMode, validateGenerateInput } from '../input/validateGenerate';
import { isJobBody, parseJob } from '../answers/parseJob';
import { TransportError } from '../errors/errors';
import { expectedRenderSeconds, slotHoldMs } from '../pacing/estimate';
import { canonicalJson, derivedIdempotencyKey, newIdempotencyKey } from './idempotency';
import { getJob } from './getJob';
import { CreateClaimedElsewhere, CreateOutcomeUnknownError, createMayHaveMadeJob, type JobLedger, type LedgerEntry, type SharedJobLedger } from './jobLedger';
import type { MadeJobs } from './madeJobs';

export interface GenerateVideoOptions {
	/** Reuse one key per input item across your own retries; a fresh one is made otherwise. */
	idempotencyKey?: string;
	/**
	 * The input as validateGenerateInput made it, when the caller validated it already (to refuse bad
	 * input before anything else, or to key its records on it): it is not validated again.
	 */
	validated?: GenerateVideoRequest;
	signal?: AbortSignalLike;
	/**
	 * The signal stops the create while it waits for a place or its turn, never once it is sent:
	 * its answer is read, and its job noted in the ledger, so that a caller who gave up and asks
	 * again gets that job (an MCP client cancels a call it timed out).
	 */
	finishOnceSent?: boolean;
	/** Allow an http:// callback to a loopback host (local sandbox only). */
	allowInsecureLoopbackCallback?: boolean;
	/**
	 * How long this account's jobs really take, when the user knows better than the documented
	 * 30–90 s (docs/api.md#render-time): it decides the first look and how long an unobserved job holds its slot.
	 */
	expectedMs?: number;
	/** Absolute time on the host's clock: fail at once (RateLimitError) rather than wait past it. */
	deadlineAtMs?: number;
	/**
	 * How long the create may wait out a 429's Retry-After, the concurrency limit's included
	 * (default: 10 min, and a create refused for concurrency queues for a place again); past it, a
	 * RateLimitError says how long to wait. For a host step that must not block (a Wait for
	 * Callback step: n8n refuses callbacks while it runs) and leaves the create to its next step,
	 * having taken no more creates than places are free; the request keeps its usual timeout,
	 * unlike with `deadlineAtMs`.
	 */
	retryBudgetMs?: number;
	/**
	 * This process will see the job end (it polls the job, or receives its callback): the job keeps
	 * its place among the plan's jobs at once until then, instead of until its expected end.
	 */
	watched?: boolean;
	/**
	 * Whether the create, kept waiting for a place, looks up the most overdue job nobody here
	 * watches (default true: a Don't Wait job of an earlier run may have ended). False where the
	 * caller schedules those lookups itself and the hour's requests must go to creates first (a
	 * Wait for Callback batch while the hour holds back its rows): each such lookup puts a create off.
	 */
	lookUpWhileWaiting?: boolean;
	/**
	 * When the service answers with the job an earlier create with the same key made (a retried
	 * run asking again), that job is looked up and returned as it is now, unless it should be made
	 * again: `retryFailed`, a job that failed; `maxAgeMs`, a job created longer ago than this. Then
	 * a new job is created with a key derived from the old one and its job id, so that a retry of
	 * this retry finds the new job in turn.
	 */
	reuse?: { retryFailed?: boolean; maxAgeMs?: number };
	/**
	 * Our own record of the creates made with these keys (see JobLedger): a key found there is
	 * never sent again; its job is looked up instead, or, when the earlier create's outcome is
	 * unknown, the call fails saying so. Every create sent is noted there first; in a shared ledger,
	 * claimed there first, so that of several processes asked the same create at once one sends it.
	 */
	ledger?: JobLedger | SharedJobLedger;
}

export interface GeneratedJob {
	job: JobRecord;
	request: GenerateVideoRequest;
	mode: GenerationMode;
	idempotencyKey: string;
	/** The service answered with the job an earlier identical request created (looked up since). */
	replayed: boolean;
	/** Earlier jobs of the same input made again instead of returned (see GenerateVideoOptions.reuse). */
	replacedJobIds: string[];
	/** Expected render time, for scheduling the first look. */
	expectedMs: number;
	/**
	 * When this process's own create of the job was answered (host clock), also for a call that
	 * joined it in flight: where the job's render time counts from. Absent for a job an earlier
	 * create made (replayed by the service, or looked up from the records), whose start is unknown here.
	 */
	answeredAtMs?: number;
}

/** How many earlier jobs of one input a create makes again, at most, before returning the last. */
const MAX_REPLACED = 10;

/**
 * Validates the input (nothing is sent if anything is wrong), waits for a free job slot and for
 * room in the rate windows, then creates the job once, with an Idempotency-Key. A replayed create
 * (same key, same body: a retried run) gives the original job as it is now, or a new one when
 * `reuse` says that job should be made again.
 */
export async function generateVideo(
	runtime: ApiRuntime,
	input: GenerateVideoInput,
	options: GenerateVideoOptions = {},
): Promise<GeneratedJob> {
	const request =
		options.validated ??
		validateGenerateInput(input, {
			allowInsecureLoopbackCallback: options.allowInsecureLoopbackCallback,
		});
	let idempotencyKey = options.idempotencyKey ?? newIdempotencyKey(runtime.random);
	const replacedJobIds: string[] = [];
	for (;;) {
		// The same key already on its way from this process (identical rows sharing one job).
		let sending = creating.get(runtime.madeJobs)?.get(idempotencyKey);
		let recorded: LedgerEntry | undefined;
		if (!sending) {
			// A host's own ledger is read without yielding, so that identical rows of one batch see each
			// other's create in flight above; a shared one is awaited, and what is in flight asked again.
			const found = options.ledger?.find(idempotencyKey);
			recorded = found instanceof Promise ? await found : found;
			if (found instanceof Promise) sending = creating.get(runtime.madeJobs)?.get(idempotencyKey);
			// Our own create in flight is noted as sent: it is waited for, not taken for another's.
			if (sending) recorded = undefined;
			if (!recorded && !sending) recorded = madeHere(runtime, request, idempotencyKey, options.ledger);
		}
		if (recorded && !('jobId' in recorded)) throw new CreateOutcomeUnknownError(idempotencyKey, recorded.sentAtMs);
		const created = sending
			? { ...(await sending), replayed: true }
			: recorded
				? await recordedJob(runtime, request, idempotencyKey, recorded.jobId, options)
				: await createNoted(runtime, request, idempotencyKey, options);
		if (!created.replayed) return { ...created, replacedJobIds };
		// The replay is the create's first answer, as it was then: its job may have ended since.
		const job = recorded || sending ? created.job : await lookUpJob(runtime, created.job.id, options);
		if (replacedJobIds.length >= MAX_REPLACED || !madeAgain(job, options.reuse, runtime.clock.now())) {
			return { ...created, job, replacedJobIds };
		}
		replacedJobIds.push(job.id);
		idempotencyKey = derivedIdempotencyKey(idempotencyKey, job.id);
	}
}

/** A lookup made on the create's behalf, within the create's own deadline and retry budget. */
function lookUpJob(runtime: ApiRuntime, jobId: string, options: GenerateVideoOptions): Promise<JobRecord> {
	return getJob(runtime, jobId, { signal: options.signal, deadlineAtMs: options.deadlineAtMs, retryBudgetMs: options.retryBudgetMs });
}

/**
 * A job this process made with this key, when the host's records have lost it (see MadeJobs):
 * noted in them again, so that the host keeps it from now on.
 */
function madeHere(runtime: ApiRuntime, request: GenerateVideoRequest, idempotencyKey: string, ledger: GenerateVideoOptions['ledger']): { jobId: string } | undefined {
	const jobId = runtime.madeJobs.find(idempotencyKey, canonicalJson(request), runtime.clock.now());
	if (jobId === undefined) return undefined;
	// Noted again without waiting: this process's memory answers meanwhile.
	const noted = ledger?.note(idempotencyKey, { jobId });
	if (noted instanceof Promise) noted.catch(() => undefined);
	return { jobId };
}

/** A job our records name for this key, as it is now: nothing is sent but the lookup. */
async function recordedJob(
	runtime: ApiRuntime,
	request: GenerateVideoRequest,
	idempotencyKey: string,
	jobId: string,
	options: GenerateVideoOptions,
): Promise<Omit<GeneratedJob, 'replacedJobIds'>> {
	const job = await lookUpJob(runtime, jobId, options);
	return { job, request, mode: generationMode(request), idempotencyKey, replayed: true, expectedMs: expectedMsOf(request, options) };
}

/** Creates once, noted in the ledger as it is sent (see createOnce) and with its job once answered. */
async function createNoted(
	runtime: ApiRuntime,
	request: GenerateVideoRequest,
	idempotencyKey: string,
	options: GenerateVideoOptions,
): Promise<Omit<GeneratedJob, 'replacedJobIds'>> {
	const { ledger } = options;
	const sending = createOnce(runtime, request, idempotencyKey, options);
	const inFlight = creating.get(runtime.madeJobs) ?? new Map<string, Promise<Omit<GeneratedJob, 'replacedJobIds'>>>();
	creating.set(runtime.madeJobs, inFlight);
	inFlight.set(idempotencyKey, sending);
	// Refused with an answer (nothing made): the key is free to send again.
	const forgetUnlessMade = async (error: unknown) => {
		// Claimed elsewhere, the record is the other process's: never forgotten here.
		if (!createMayHaveMadeJob(error) && !(error instanceof CreateClaimedElsewhere)) await onlyIfShared(ledger?.forget(idempotencyKey));
	};
	try {
		const created = await sending.catch(async (error: unknown) => {
			await forgetUnlessMade(error);
			return await Promise.reject(error);
		});
		await onlyIfShared(ledger?.note(idempotencyKey, { jobId: created.job.id }));
		runtime.madeJobs.remember(idempotencyKey, canonicalJson(request), created.job.id, runtime.clock.now());
		return created;
	} finally {
		inFlight.delete(idempotencyKey);
	}
}

/** Creates this process is sending, by API key (its MadeJobs, shared like its limiter) and idempotency key. */
const creating = new WeakMap<MadeJobs, Map<string, Promise<Omit<GeneratedJob, 'replacedJobIds'>>>>();

function expectedMsOf(request: GenerateVideoRequest, options: GenerateVideoOptions): number {
	const estimateMs = expectedRenderSeconds(request.resolution, request.duration) * 1000;
	return options.expectedMs !== undefined && options.expectedMs > 0 ? options.expectedMs : estimateMs;
}

function madeAgain(job: JobRecord, reuse: GenerateVideoOptions['reuse'], nowMs: number): boolean {
	if (job.status === 'failed' && reuse?.retryFailed) return true;
	const createdAtMs = Date.parse(job.createdAt ?? '');
	return reuse?.maxAgeMs !== undefined && Number.isFinite(createdAtMs) && nowMs - createdAtMs > reuse.maxAgeMs;
}

async function createOnce(
	runtime: ApiRuntime,
	request: GenerateVideoRequest,
	idempotencyKey: string,
	options: GenerateVideoOptions,
): Promise<Omit<GeneratedJob, 'replacedJobIds'>> {
	const estimateMs = expectedRenderSeconds(request.resolution, request.duration) * 1000;
	const expectedMs = expectedMsOf(request, options);
	const watched = options.watched ?? false;
	// Refused for concurrency (others on the account hold the places: see JobSlots.concurrencyRefused),
	// the create queues for a place again, for as long as a call may retry.
	// With a budget of its own, the refusal is a 429 like any other: waited out within the budget, or thrown.
	const queuesForPlace = options.retryBudgetMs === undefined;
	const queueUntilMs = runtime.clock.now() + DEFAULT_RETRY_BUDGET_MS;
	for (;;) {
		const slot = await runtime.limiter.acquireJobSlot({
			idempotencyKey,
			signal: options.signal,
			deadlineAtMs: options.deadlineAtMs,
			lookUp: options.lookUpWhileWaiting === false ? undefined : (jobId) => lookUpJob(runtime, jobId, options),
		});
		let created = false;
		try {
			// Noted before it leaves: if the answer is never seen, a retry must not send it again.
			// A host's own ledger is noted without yielding, as it always was: a batch's creates keep their order.
			const ledger = options.ledger;
			if (ledger && 'claim' in ledger) await claimSending(ledger, idempotencyKey, runtime.clock.now());
			else ledger?.note(idempotencyKey, { sentAtMs: runtime.clock.now() });
			const response = await callApi(runtime, {
				operation: 'generate',
				method: 'POST',
				path: '/api/v1/generate',
				body: request,
				idempotencyKey,
				signal: options.signal,
				finishOnceSent: options.finishOnceSent,
				deadlineAtMs: options.deadlineAtMs,
				retryBudgetMs: options.retryBudgetMs,
				returnConcurrencyRefusal: queuesForPlace && runtime.clock.now() < queueUntilMs,
			});
			if (isConcurrencyRefusal(response)) continue;
			const job = readCreatedJob(response.body, idempotencyKey);
			if (job.status !== 'done' && job.status !== 'failed') {
				const now = runtime.clock.now();
				slot.bind(job.id, now + expectedMs, now + slotHoldMs(expectedMs, estimateMs, watched), watched, idempotencyKey);
				created = true;
			}
			const replayed = response.headers['idempotent-replayed'] === 'true';
			return {
				job,
				request,
				mode: generationMode(request),
				idempotencyKey,
				replayed,
				expectedMs,
				...(replayed ? {} : { answeredAtMs: runtime.clock.now() }),
			};
		} finally {
			// A failed or refused create, or a job already finished, holds no place among the running jobs.
			if (!created) slot.release();
		}
	}
}

/** Claims a create about to leave in a shared ledger: refused when another process noted it first. */
async function claimSending(ledger: SharedJobLedger, idempotencyKey: string, sentAtMs: number): Promise<void> {
	const recorded = await ledger.claim(idempotencyKey, { sentAtMs });
	if (recorded) throw new CreateClaimedElsewhere(idempotencyKey, recorded);
}

/** A shared ledger's step is awaited; a host's own is done already, and nothing yields for it. */
async function onlyIfShared(step: void | Promise<void> | undefined): Promise<void> {
	if (step instanceof Promise) await step;
}

/** An accepted create whose body cannot be read still created a job: say how to find it. */
function readCreatedJob(body: unknown, idempotencyKey: string): JobRecord {
	if (!isJobBody(body)) {
		throw new TransportError(
			'The Omni Video API accepted the job but its answer could not be read, so the job id is ' +
				'unknown. Check your Omni Video dashboard before running again; rerunning with the same ' +
				`idempotency key ${idempotencyKey} is safe where the service honours it.`,
			'malformed',
			{ idempotencyKey, code: 'malformed_response' },
		);
	}
	return parseJob(body);
}
