import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import {
	createMayHaveMadeJob,
	MIN_LATE_MS,
	isTerminal,
	jobSeenEnded,
	RateLimitError,
	type JobRecord,
	type OmniVideoClient,
} from '../../../../core';
import { errorJson } from '../../../shared/nodeErrors';
import { sendPlanned } from './createItemJob';
import { isRefusedCallbackUrl } from './callbackFallback';
import { PROCESS_MARK, isOver, newParkMark, runningRows, storeBatch, waitsForPlace, type BatchRow, type ParkedBatch } from './callbackBatch';
import { callbackUrlOf } from './resumeUrl';
import { batchItems, parkedItems } from './callbackRows';
import { parkWithContinuation } from './parkContinuation';
import { batchRequestTimes, callbackLate, holdsPlaceElsewhere, lookAt, placeFreeAt, requestsScarce } from './overdueLooks';
import type { HostClock } from '../../../shared/hostClock';
import { HOLD_MS, awaitsUnseenJob, holdIfStale, releaseHold } from './createHold';
import { DATA_TABLE_WAIT_MS, waitsForDataTables } from './dataTableWait';

/**
 * The longest a step waits for the plan's request windows, a 429's Retry-After or a place among
 * the plan's jobs (ms). A running execution cannot take callbacks (n8n answers 409, and a service
 * that delivers once never sends them again), so what cannot go by then waits parked, until it
 * can: a callback may wake it sooner.
 */
const STEP_TURN_MS = 2_000;

/**
 * When no callback of the batch is expected (see isQuiet), a step may wait for the windows itself,
 * this long at most (real ms): n8n's wait tracker wakes a paused execution up to a minute late, and
 * n8n's own Wait node waits in the process below 65 s for the same reason.
 */
const QUIET_TURN_REAL_MS = 65_000;

/**
 * How much sooner than the windows' turn a batch with nothing running asks to be woken (real ms),
 * so that n8n's wait tracker, which polls once a minute and may wake it up to that late, wakes it
 * before the turn, and the step waits the rest in the process (within QUIET_TURN_REAL_MS): no
 * callback can come meanwhile. Not while jobs run, even late ones: on the documented service a
 * late job's callback is tried again, and n8n answers it 409 while a step waits, so that its job
 * needs a lookup of its own (docs/benchmarks.md#measured-rules-in-the-code).
 */
const EARLY_PARK_REAL_MS = 62_000;

/**
 * Whether no callback of the batch is expected soon: nothing runs, or each running job's callback
 * came (unsigned, to confirm) or is late (see callbackLate), for a step with a row to make or with
 * every row made. A create is worth the wait: a step parked at the hour's end with one row to make
 * is woken by the wait tracker minutes after the hour has room. So are the last lookups, once every
 * row is made. Lookups while rows still wait are not: a callback the documented service tries again
 * while the step waits is answered 409, and its job needs a lookup of its own
 * (docs/benchmarks.md#measured-rules-in-the-code).
 */
function isQuiet(batch: ParkedBatch, nowMs: number, forCreate: boolean): boolean {
	const lateCounts = forCreate || !batch.rows.some(waitsForPlace);
	return runningRows(batch).every((row) => row.confirm || (lateCounts && callbackLate(row, nowMs)));
}

/**
 * Requests this step may send now: what the windows take within STEP_TURN_MS; or, in a quiet
 * batch, what they take within QUIET_TURN_REAL_MS: one create at a time when none goes sooner
 * (once it is made, a callback is to come again), or every due lookup, also when some go at once.
 * A quiet batch that parked with lookups left would need n8n's wait tracker to wake it seconds
 * later, and it wakes up to a minute late (docs/benchmarks.md#measured-rules-in-the-code).
 */
export function requestRoom(
	batch: ParkedBatch,
	limiter: Pick<OmniVideoClient['runtime']['limiter'], 'requestRoomBy'>,
	clock: Pick<HostClock, 'now' | 'realMs'>,
	purpose: 'create' | 'lookup' = 'create',
): number {
	const room = limiter.requestRoomBy(clock.now() + STEP_TURN_MS);
	if (!isQuiet(batch, clock.now(), purpose === 'create')) return room;
	// QUIET_TURN_REAL_MS on the client's clock (a sped-up sandbox's, in tests).
	const quietRoom = limiter.requestRoomBy(clock.now() + QUIET_TURN_REAL_MS / clock.realMs(1));
	return purpose === 'create' ? Math.max(room, Math.min(1, quietRoom)) : quietRoom;
}

/**
 * How much sooner than asked a wake may come and still be the batch's own (real ms): a wait
 * tracker on another machine may run a little ahead of this one.
 */
const EARLY_WAKE_TOLERANCE_MS = 1_000;

/**
 * Whether n8n woke the execution, with no callback, before the moment the batch's last park asked
 * for. n8n's wait tracker sets one timer per execution from the wait time it read at its last
 * poll (every 60 s), and does not move it when the execution parks again; when it fires it resumes
 * the execution as it finds it. Such a wake may also have read the execution while another step ran,
 * and then it runs on data older than that step's, with the static data the execution began with
 * (see batchJobLedger.ts): seen on n8n 2.8.4 in queue mode, a wake that ran so sent again a create
 * the other step had just sent.
 */
function isEarlyWake(batch: ParkedBatch): boolean {
	return batch.heard.length === 0 && batch.wakeAt !== undefined && Date.now() < batch.wakeAt - EARLY_WAKE_TOLERANCE_MS;
}

/** Parks the batch until its next callback or `wakeAt` (real ms), with a new mark (see ParkedBatch.park). */
async function park(context: IExecuteFunctions, batch: ParkedBatch, resumeUrl: string, wakeAt: number): Promise<StepResult> {
	batch.park = newParkMark();
	batch.wakeAt = wakeAt;
	storeBatch(context, batch);
	await parkWithContinuation(context, new Date(wakeAt));
	return { output: [parkedItems(batch, resumeUrl)] };
}

/** What a step ends with: the node's output, or that the service refused the resume URL (the node polls). */
export type StepResult = { output: INodeExecutionData[][] } | { refusedCallbackUrl: true } | { failed: unknown[] };

function ended(batch: ParkedBatch, job: JobRecord, client: OmniVideoClient): void {
	for (const row of batch.rows) if (row.job === job.id && row.ended === undefined) row.ended = job;
	jobSeenEnded(client.runtime, job);
}

/** The callbacks webhook() recorded: signed ones are the job's state; unsigned ones mark their job to look up. */
function mergeHeard(batch: ParkedBatch, client: OmniVideoClient): void {
	for (const heard of batch.heard) {
		// A callback naming a row whose create was in doubt or is held: a create this step cannot see made this job.
		if (awaitsUnseenJob(batch, heard.row) && !batch.rows.some((row) => row.job === heard.job)) {
			Object.assign(batch.rows[heard.row!], { job: heard.job, endAt: heard.at, by: undefined, plan: undefined });
		}
		if (heard.signed && heard.record && isTerminal(heard.record)) ended(batch, heard.record, client);
		else for (const row of batch.rows) if (row.job === heard.job && row.ended === undefined) row.confirm = true;
	}
	batch.heard = [];
	// Jobs that ended while other processes held the batch: their places are free here too.
	for (const row of batch.rows) if (row.ended) client.runtime.limiter.jobEnded(row.ended.id);
}

/**
 * Unsigned callbacks confirmed (`confirmations`); or those and overdue jobs (their callback lost,
 * refused or never sent) looked up (`due`); or every running job (`all`: time is up).
 */
async function lookUp(batch: ParkedBatch, client: OmniVideoClient, clock: HostClock, which: 'confirmations' | 'due' | 'all'): Promise<void> {
	const now = clock.now();
	const due = new Map<string, BatchRow>();
	const scarce = requestsScarce(batch, client.runtime.limiter, now);
	const all = which === 'all';
	for (const row of runningRows(batch)) if (all || row.confirm || (which === 'due' && now >= lookAt(row, scarce))) due.set(row.job!, row);
	// Confirmations first, then the most overdue; the rest wait for the windows (see STEP_TURN_MS).
	const order = [...due.entries()].sort(([, a], [, b]) => Number(b.confirm ?? false) - Number(a.confirm ?? false) || (a.endAt ?? 0) - (b.endAt ?? 0));
	const jobIds = order.map(([jobId]) => jobId).slice(0, all ? undefined : requestRoom(batch, client.runtime.limiter, clock, 'lookup'));
	await Promise.all(
		jobIds.map(async (jobId) => {
			const rows = batch.rows.filter((row) => row.job === jobId);
			try {
				const job = client.runtime.endedJobs.recall(jobId) ?? (await client.getJob(jobId, { retryBudgetMs: STEP_TURN_MS }));
				for (const row of rows) Object.assign(row, { lookedAt: clock.now(), confirm: false, uncalled: isTerminal(job) && !row.confirm });
				if (isTerminal(job)) ended(batch, job, client);
			} catch {
				// Looked at again at its next turn.
				for (const row of rows) row.lookedAt = clock.now();
			}
		}),
	);
}

/**
 * Makes the rows still to make as places are free: this process's limiter's free places, less the
 * batch's jobs other processes made (their places are held there, not here: see
 * holdsPlaceElsewhere); one at least when nothing of the batch runs, so that something calls back.
 * Each create is noted in the node's ledger before it leaves (sendPlanned): a create whose outcome
 * is unknown is never sent again. A create refused for the plan's limits (429, nothing made) leaves
 * its row to wait for a later step, and this step makes no more.
 */
async function makeRows(context: IExecuteFunctions, batch: ParkedBatch, client: OmniVideoClient, clock: HostClock, resumeUrl: string, everyRow: boolean): Promise<unknown[]> {
	const failures: unknown[] = [];
	// Held: the rows still to make here may have been made by the step before (see holdIfStale).
	if (batch.hold) return failures;
	// Only a step that must make every row now (everyRow) waits out the limits and gives up on a row over them.
	const retryBudgetMs = everyRow ? undefined : STEP_TURN_MS;
	for (;;) {
		const waiting = batch.rows.map((row, index) => ({ row, index })).filter(({ row }) => waitsForPlace(row));
		if (waiting.length === 0) return failures;
		const running = runningRows(batch);
		const now = clock.now();
		const elsewhere = running.filter((row) => row.by !== PROCESS_MARK && holdsPlaceElsewhere(row, now)).length;
		const spare = everyRow ? waiting.length : Math.max(0, client.freeJobSlots() - elsewhere);
		// A binary source's batch is made whole in its first step (see parkForCallbacks), waiting if it must.
		const room = everyRow ? waiting.length : requestRoom(batch, client.runtime.limiter, clock);
		const take = Math.min(waiting.length, room, spare > 0 ? spare : running.length === 0 ? 1 : 0);
		if (take === 0) return failures;
		let refused = false;
		// While the hour holds the rows back, a create kept waiting for a place looks nothing up:
		// the batch's own schedule (lookAt) keeps the hour's requests for creates.
		const lookUpWhileWaiting = !requestsScarce(batch, client.runtime.limiter, now);
		await Promise.all(
			waiting.slice(0, take).map(async ({ row, index }) => {
				const plan = row.plan!;
				const sentAt = clock.now();
				try {
					const { created } = await sendPlanned.call(context, client, plan, false, { callbackUrl: callbackUrlOf(resumeUrl, index), retryBudgetMs, lookUpWhileWaiting });
					// Counted from its answer: the create may have waited for the windows or a place first
					// (a quiet batch's step waits up to QUIET_TURN_REAL_MS), and its row's expected end and
					// the request other processes count (batchRequestTimes) follow from this moment.
					const answeredAt = clock.now();
					Object.assign(row, { job: created.job.id, endAt: answeredAt + created.expectedMs, renderMs: created.expectedMs, by: PROCESS_MARK, plan: undefined });
					// An earlier run's job, found again in our records, may have ended already.
					if (isTerminal(created.job)) ended(batch, created.job, client);
				} catch (error) {
					if (error instanceof RateLimitError && retryBudgetMs !== undefined) {
						refused = true;
						return;
					}
					failures.push(error);
					if (isRefusedCallbackUrl(error)) row.error = { ...errorJson(error), refusedCallbackUrl: true };
					else if (createMayHaveMadeJob(error)) Object.assign(row, { doubt: sentAt, plan: undefined });
					else Object.assign(row, { error: errorJson(error), plan: undefined });
				}
			}),
		);
		if (refused) return failures;
	}
}

/**
 * When the batch must look without a callback: its earliest overdue moment, and no sooner than
 * the plan's windows take a request (looking costs one), bounded by Limit Wait Time.
 */
function nextLook(batch: ParkedBatch, nowMs: number, client: OmniVideoClient, clock: HostClock): number {
	const scarce = requestsScarce(batch, client.runtime.limiter, nowMs);
	const times = runningRows(batch).map((row) => lookAt(row, scarce));
	// Rows wait: for the windows (then as soon as they take a request), or for a place that other work
	// holds (then when the first hold of the batch's jobs runs out, here or as counted for another
	// process's, and again after a short while at the latest).
	if (batch.hold) times.push(batch.hold.at + HOLD_MS);
	else if (batch.rows.some(waitsForPlace)) {
		const holds = [client.runtime.limiter.placeFreesAt() ?? Infinity, ...runningRows(batch).filter((row) => row.by !== PROCESS_MARK).map(placeFreeAt)];
		const freeing = holds.filter((at) => at > nowMs);
		times.push(requestRoom(batch, client.runtime.limiter, clock) === 0 ? nowMs : Math.min(nowMs + 30_000, ...freeing));
	}
	const turnAt = client.runtime.limiter.nextRequestAt();
	return Math.max(nowMs + MIN_LATE_MS, Math.min(batch.limitAt, ...times.map((at) => Math.max(at, turnAt))));
}

/**
 * One step of a Wait for Callback batch, on whatever process runs the node: what webhook()
 * recorded is merged, jobs that need it are looked up, the next rows are made, and the batch
 * either ends (one item per input item) or parks again until its next callback or the moment it
 * must look without one. Every decision is made here; webhook() only records.
 */
export async function stepBatch(
	context: IExecuteFunctions,
	batch: ParkedBatch,
	{ client, clock }: { client: OmniVideoClient; clock: HostClock },
	resumeUrl: string,
	options: { first: boolean; everyRow?: boolean; failFast?: boolean },
): Promise<StepResult> {
	// An early wake sends nothing and parks again until the batch's own moment.
	if (!options.first && isEarlyWake(batch)) return await park(context, batch, resumeUrl, batch.wakeAt!);
	if (!options.first) holdIfStale(context, batch, clock.now(), client.runtime.limiter.currentLimits.concurrentJobs);
	mergeHeard(batch, client);
	releaseHold(context, batch);
	// The batch's requests from other processes count here too (each worker has its own limiter).
	client.runtime.limiter.learnSent(batchRequestTimes(batch));
	// Callbacks that came unsigned are confirmed first (each frees a place, and a batch whose only
	// running jobs wait for confirmation may wait in the process for them). Then the rows that free
	// places wait for are made, before overdue jobs are looked up: where the windows are short, a
	// create started sooner ends its job sooner, a lookup sooner only tells an end sooner. Then the
	// places those lookups free are taken.
	await lookUp(batch, client, clock, 'confirmations');
	const everyRow = options.everyRow ?? false;
	const failures = await makeRows(context, batch, client, clock, resumeUrl, everyRow);
	if (!options.failFast || failures.length === 0) {
		await lookUp(batch, client, clock, 'due');
		failures.push(...(await makeRows(context, batch, client, clock, resumeUrl, everyRow)));
	}
	if (options.first && batch.rows.every((row) => row.job === undefined) && batch.rows.some((row) => row.error?.refusedCallbackUrl)) {
		storeBatch(context, undefined);
		return { refusedCallbackUrl: true };
	}
	// A create failed and the user lets no error through: the run fails, nothing is parked.
	if (options.failFast && failures.length > 0) return { failed: failures };
	const now = clock.now();
	if (isOver(batch) || now >= batch.limitAt) {
		// Time is up: what the service says now is each job's outcome (done, failed or still rendering).
		if (!isOver(batch)) await lookUp(batch, client, clock, 'all');
		if (!options.first && waitsForDataTables(context, batch)) {
			batch.waitedForModules = true;
			return await park(context, batch, resumeUrl, Date.now() + DATA_TABLE_WAIT_MS);
		}
		storeBatch(context, undefined);
		return { output: [await batchItems(context, batch, resumeUrl)] };
	}
	return await park(context, batch, resumeUrl, clock.realDate(parkUntil(batch, now, client, clock)).getTime());
}

/**
 * When the batch parks till: nextLook; or, where only the windows hold back a batch with nothing
 * running, EARLY_PARK_REAL_MS before their turn, which the woken step then waits for itself.
 */
function parkUntil(batch: ParkedBatch, nowMs: number, client: OmniVideoClient, clock: HostClock): number {
	const at = nextLook(batch, nowMs, client, clock);
	const early = EARLY_PARK_REAL_MS / clock.realMs(1);
	const windowsBind = at === client.runtime.limiter.nextRequestAt();
	return windowsBind && at - nowMs > early && runningRows(batch).length === 0 ? at - early : at;
}
