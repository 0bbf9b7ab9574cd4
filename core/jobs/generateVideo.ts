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
import { CreateClaimedElsewhere, CreateOutcomeUnknownError, createMayHaveMadeJob, type JobLedger, type LedgerEntry } from './jobLedger';
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
	 * never sent again; its job is looked up instead. Every create is claimed there before it is
	 * sent, so that of several callers asked the same create at once one sends it.
	 */
	ledger?: JobLedger;
	/** What the ledger holds for the key, when the caller has read it already (null: nothing): not read again. */
	recorded?: LedgerEntry | null;
	/**
	 * The job as the caller last saw it, when its records know one: a job the ledger names is taken
	 * from there instead of being looked up (its age still decides `reuse`).
	 */
	lastSeen?: (jobId: string) => Promise<{ job: JobRecord; seenAtMs: number } | undefined>;
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
	/** When the caller's records saw the job (see GenerateVideoOptions.lastSeen), when it was not looked up now. */
	seenAtMs?: number;
}

/**
 * What a create came to. Its errors (bad input, limits, the service's refusal, a lost answer)
 * are thrown; these are its ordinary outcomes:
 * - made: this call sent it and the service made the job;
 * - made before: the job already made for this key (our records, the service's replay, or an
 *   identical create in flight here), as it is now;
 * - being made elsewhere: another caller sends it and its answer may still come: ask again soon;
 * - unknown: sent before, its answer never seen: nothing is sent again.
 */
export type CreateOutcome =
	| { outcome: 'made' | 'made before'; created: GeneratedJob }
	| { outcome: 'being made elsewhere' | 'unknown'; idempotencyKey: string; sentAtMs: number };

/** How many earlier jobs of one input a create makes again, at most, before returning the last. */
const MAX_REPLACED = 10;

/**
 * Validates the input (nothing is sent if anything is wrong), waits for a free job slot and for
 * room in the rate windows, then creates the job once, with an Idempotency-Key, claimed in the
 * ledger first. A create made before (same key: a retried run) gives the original job as it is
 * now, or a new one when `reuse` says that job should be made again.
 */
export async function createVideoOnce(
	runtime: ApiRuntime,
	input: GenerateVideoInput,
	options: GenerateVideoOptions = {},
): Promise<CreateOutcome> {
	const request =
		options.validated ??
		validateGenerateInput(input, {
			allowInsecureLoopbackCallback: options.allowInsecureLoopbackCallback,
		});
	let idempotencyKey = options.idempotencyKey ?? newIdempotencyKey(runtime.random);
	let recorded: LedgerEntry | null | undefined = options.recorded;
	const replacedJobIds: string[] = [];
	for (;;) {
		// The same key already on its way from this process (identical rows or calls sharing one job),
		// asked again after the ledger's read, which may yield to it.
		if (recorded === undefined && !inFlight(runtime, idempotencyKey)) recorded = (await options.ledger?.find(idempotencyKey)) ?? null;
		const sending = inFlight(runtime, idempotencyKey);
		const entry = sending ? undefined : (recorded ?? madeHere(runtime, request, idempotencyKey, options.ledger));
		recorded = undefined;
		const made = sending ? joined(await sending) : entry ? await fromRecords(runtime, request, idempotencyKey, entry, options) : await createNoted(runtime, request, idempotencyKey, options);
		if ('outcome' in made) return made;
		if (!made.replayed) return { outcome: 'made', created: { ...made, replacedJobIds } };
		if (replacedJobIds.length >= MAX_REPLACED || !madeAgain(made.job, options.reuse, runtime.clock.now())) {
			return { outcome: 'made before', created: { ...made, replacedJobIds } };
		}
		replacedJobIds.push(made.job.id);
		idempotencyKey = derivedIdempotencyKey(idempotencyKey, made.job.id);
	}
}

/**
 * createVideoOnce for a host that wants the job: an outcome other than a job is an error that says
 * what to do (a host's own records are never sent by another caller, so only `unknown` comes).
 */
export async function generateVideo(runtime: ApiRuntime, input: GenerateVideoInput, options: GenerateVideoOptions = {}): Promise<GeneratedJob> {
	const made = await createVideoOnce(runtime, input, options);
	if ('created' in made) return made.created;
	if (made.outcome === 'being made elsewhere') throw new CreateClaimedElsewhere(made.idempotencyKey);
	throw new CreateOutcomeUnknownError(made.idempotencyKey, made.sentAtMs);
}

type Made = Omit<GeneratedJob, 'replacedJobIds'>;
/** An identical create of this process, joined: its job is one made before, for this caller. */
const joined = (settled: Made | NotMade): Made | NotMade => ('outcome' in settled ? settled : { ...settled, replayed: true });
type NotMade = Extract<CreateOutcome, { sentAtMs: number }>;

const inFlight = (runtime: ApiRuntime, idempotencyKey: string) => creating.get(runtime.madeJobs)?.get(idempotencyKey);

/** What our records say of the key: its job as it is now, or that it was sent (by whom is alive or not). */
async function fromRecords(runtime: ApiRuntime, request: GenerateVideoRequest, idempotencyKey: string, entry: LedgerEntry, options: GenerateVideoOptions): Promise<Made | NotMade> {
	if (!('jobId' in entry)) return { outcome: entry.pending ? 'being made elsewhere' : 'unknown', idempotencyKey, sentAtMs: entry.sentAtMs };
	const seen = await options.lastSeen?.(entry.jobId);
	const job = seen?.job ?? (await lookUpJob(runtime, entry.jobId, options));
	return { job, request, mode: generationMode(request), idempotencyKey, replayed: true, expectedMs: expectedMsOf(request, options), ...(seen ? { seenAtMs: seen.seenAtMs } : {}) };
}

/** A lookup made on the create's behalf, within the create's own deadline and retry budget. */
function lookUpJob(runtime: ApiRuntime, jobId: string, options: GenerateVideoOptions): Promise<JobRecord> {
	return getJob(runtime, jobId, { signal: options.signal, deadlineAtMs: options.deadlineAtMs, retryBudgetMs: options.retryBudgetMs });
}

/**
 * A job this process made with this key, when the host's records have lost it (see MadeJobs):
 * noted in them again, so that the host keeps it from now on.
 */
function madeHere(runtime: ApiRuntime, request: GenerateVideoRequest, idempotencyKey: string, ledger: JobLedger | undefined): { jobId: string } | undefined {
	const jobId = runtime.madeJobs.find(idempotencyKey, canonicalJson(request), runtime.clock.now());
	if (jobId === undefined) return undefined;
	// Noted again without waiting: this process's memory answers meanwhile.
	ledger?.note(idempotencyKey, { jobId }).catch(() => undefined);
	return { jobId };
}

/**
 * Creates once, claimed in the ledger as it is sent (see createOnce) and noted with its job once
 * answered. A create sent and never answered is noted as such (answerLost); one refused with an
 * answer is forgotten, its key free to send again.
 */
function createNoted(runtime: ApiRuntime, request: GenerateVideoRequest, idempotencyKey: string, options: GenerateVideoOptions): Promise<Made | NotMade> {
	const settled = sendAndNote(runtime, request, idempotencyKey, options);
	// Identical creates of this process join this one until it is settled.
	const inThisProcess = creating.get(runtime.madeJobs) ?? new Map<string, Promise<Made | NotMade>>();
	creating.set(runtime.madeJobs, inThisProcess);
	inThisProcess.set(idempotencyKey, settled);
	const done = () => {
		if (inThisProcess.get(idempotencyKey) === settled) inThisProcess.delete(idempotencyKey);
	};
	settled.then(done, done);
	return settled;
}

async function sendAndNote(runtime: ApiRuntime, request: GenerateVideoRequest, idempotencyKey: string, options: GenerateVideoOptions): Promise<Made | NotMade> {
	const { ledger } = options;
	const claim = { held: false };
	const sent = await createOnce(runtime, request, idempotencyKey, options, claim).catch(async (error: unknown) => {
		// Only a claim this call holds is its own to settle.
		if (claim.held) await (createMayHaveMadeJob(error) ? ledger?.answerLost(idempotencyKey) : ledger?.forget(idempotencyKey));
		return await Promise.reject(error);
	});
	if ('recorded' in sent) return await fromRecords(runtime, request, idempotencyKey, sent.recorded, options);
	await ledger?.note(idempotencyKey, { jobId: sent.job.id });
	runtime.madeJobs.remember(idempotencyKey, canonicalJson(request), sent.job.id, runtime.clock.now());
	// The service's replay is the create's first answer, as it was then: its job may have ended since.
	return sent.replayed ? { ...sent, job: await lookUpJob(runtime, sent.job.id, options) } : sent;
}

/** Creates this process is sending, by API key (its MadeJobs, shared like its limiter) and idempotency key. */
const creating = new WeakMap<MadeJobs, Map<string, Promise<Made | NotMade>>>();

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
	claim: { held: boolean },
): Promise<Made | { recorded: LedgerEntry }> {
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
			// Claimed before it leaves: if the answer is never seen, a retry must not send it again. Sent
			// again after a refusal for a place, it is noted as sent anew: whoever asks meanwhile waits for it.
			const sentAtMs = runtime.clock.now();
			if (claim.held) await options.ledger?.note(idempotencyKey, { sentAtMs });
			else {
				const recorded = await options.ledger?.claim(idempotencyKey, { sentAtMs });
				if (recorded) return { recorded };
				claim.held = true;
			}
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
