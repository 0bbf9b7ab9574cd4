import { callbackLateMs, expectedRenderSeconds, GENERATE_LIMITS, isOmniVideoError, isTerminal, jobSeenEnded, learnRenderTime, type JobRecord } from '../../core';
import type { Connection } from './connection';
import { sleep } from './sleep';
import { dropLooks, holdLooks, jobEntryFrom, jobRecordName, noteCallback, noteJobSeen, takeLooks, type JobEntry, type Seen } from './jobRecords';
import { lookOrFollow, RECORDS_READ_MS, type HeldJobRecord } from './lookHold';
import type { StateStore } from './state/store';

/** The longest a job is watched without an end: past the longest render, and a call's wait, many times. */
const WATCH_MS = 15 * 60_000;
/**
 * What one look is worth, as a share of the key's median render time: over three times core's
 * default. An agent waits seconds more for a video it waits a minute for anyway, and the plan's
 * requests (200 an hour on Pro) are what its next videos need (docs/benchmarks.md#mcp-server).
 */
const LOOK_COST_SHARE = 0.5;

/** When a job this server made was created and is expected to end (host clock): where its looks are placed from. */
export interface JobTimes {
	createdAtMs: number;
	expectedEndAtMs: number;
}


/** One look schedule for one job in this process: every call about the job waits on it. */
export interface Watch {
	/** The job once ended (done or failed). */
	readonly ended: Promise<JobRecord>;
	/** When the next look is due (real ms), once the schedule has one. */
	nextLookAtMs(): number | undefined;
	/**
	 * A call waits on the schedule, told of each look at the still-running job. It leaves at its
	 * bound (the schedule goes on: the receipt says when its next look is due) or cancelled: the last
	 * call to leave cancelled stops the schedule, since nobody asked for the job since.
	 */
	join(listener: (job: JobRecord) => void): { leave(cancelled: boolean): void };
}

/** A schedule running in this process; once stopped (its last call cancelled) it is never handed out again. */
interface ActiveWatch {
	watch: Promise<Watch>;
	stopped: boolean;
}

/**
 * Calls about the same job share one look schedule (core's waitForJob: the first look near the
 * expected end, then backoff), running in the background from the create on, whether or not a call
 * waits: a call joins it for as long as its bound allows, a receipt says when the next look is due,
 * and a call right after a look answers from it. What is seen is kept in the store, so that a
 * server restarted, or another process on the key, starts from it.
 */
export class JobWatches {
	private readonly active = new Map<string, ActiveWatch>();

	constructor(
		private readonly store: StateStore,
		private readonly now: () => number,
	) {}

	/** The job as last seen by any process sharing the records, if it was. */
	async lastSeen(fingerprint: string, jobId: string): Promise<Seen | undefined> {
		return (await this.entry(fingerprint, jobId))?.seen;
	}

	/** When the job is expected to end (real ms), if known. */
	async expectedEndAt(fingerprint: string, jobId: string): Promise<number | undefined> {
		return (await this.entry(fingerprint, jobId))?.expectedEndAtMs;
	}

	/** When the job was created and is expected to end (host clock), as far as the records know. */
	async times(fingerprint: string, jobId: string): Promise<Partial<JobTimes>> {
		const entry = await this.entry(fingerprint, jobId);
		return { createdAtMs: entry?.createdAtMs, expectedEndAtMs: entry?.expectedEndAtMs };
	}

	/** Notes a job as just seen, and when it was created and is expected to end when that is first learned. */
	async seen(fingerprint: string, job: JobRecord, times?: JobTimes): Promise<void> {
		await this.store.run(noteJobSeen, [jobRecordName(fingerprint, job.id)], { job, createdAtMs: times?.createdAtMs, expectedEndAtMs: times?.expectedEndAtMs }, this.now());
	}

	/** This process's schedule for the job, if one runs. */
	running(jobId: string): Promise<Watch> | undefined {
		const entry = this.active.get(jobId);
		return entry && !entry.stopped ? entry.watch : undefined;
	}

	/**
	 * Joins the job's schedule in this process, starting it when none runs: from when the records
	 * say the job was created and is expected to end, else from what the caller knows of it.
	 */
	watch(connection: Connection, job: JobRecord, known: { expectedMs?: number; createdAtMs?: number } = {}): Promise<Watch> {
		if (isTerminal(job)) return Promise.resolve({ ended: Promise.resolve(job), nextLookAtMs: () => undefined, join: () => ({ leave: () => undefined }) });
		const running = this.active.get(job.id);
		// A schedule being stopped (its only call cancelled just now) is not joined: a call asked right
		// after, such as the agent's retry, gets a schedule of its own.
		if (running && !running.stopped) return running.watch;
		// Its watch is set at once below; start() reads the entry only later, from its callbacks.
		const entry = { stopped: false } as ActiveWatch;
		entry.watch = this.start(connection, job, known, entry);
		this.active.set(job.id, entry);
		return entry.watch;
	}

	private async start(connection: Connection, job: JobRecord, known: { expectedMs?: number; createdAtMs?: number }, entry: ActiveWatch): Promise<Watch> {
		let nextLookAtMs: number | undefined;
		const stop = new AbortController();
		// Written in the order seen: a late write of a look must not put back a job already ended.
		let writing = Promise.resolve();
		const keep = (seen: JobRecord) => (writing = writing.then(() => this.seen(connection.fingerprint, seen)).catch(() => undefined));
		let last = job;
		const listeners = new Set<(job: JobRecord) => void>();
		const { expectedMs, createdAtMs } = await this.scheduleFrom(connection.fingerprint, job.id, known);
		const told = (seen: JobRecord) => {
			last = seen;
			for (const listener of listeners) listener(seen);
		};
		const look = (lookDueAt: (atMs: number) => void) =>
			// With callbacks, the job's end is heard (by any replica) and looked up only once overdue.
			(connection.callbackUrl === undefined
				? Promise.resolve(undefined)
				: this.untilCallback(connection, job.id, { createdAtMs: createdAtMs ?? this.now(), renderMs: expectedMs ?? expectedRenderSeconds(GENERATE_LIMITS.defaultResolution, GENERATE_LIMITS.defaultDurationSeconds) * 1000 }, stop.signal, lookDueAt)
			).then((end) => end ?? connection.client.waitForJob(job.id, {
				timeoutMs: WATCH_MS,
				signal: stop.signal,
				lookCostShare: LOOK_COST_SHARE,
				expectedMs,
				createdAtMs,
				onLookScheduled: lookDueAt,
				onProgress: (seen) => {
					void keep(seen);
					told(seen);
				},
			}));
		const name = jobRecordName(connection.fingerprint, job.id);
		const record: HeldJobRecord = {
			read: () => this.entry(connection.fingerprint, job.id),
			take: (me, untilMs, gone) => this.store.run(takeLooks, [name], { me, untilMs, gone }, this.now()),
			hold: (me, untilMs, nextLookAtMs) => this.store.run(holdLooks, [name], { me, untilMs, nextLookAtMs }, this.now()),
			drop: (me) => this.store.run(dropLooks, [name], { me }, this.now()),
		};
		const ended = lookOrFollow(record, this.store, this.now, stop.signal, {
			look,
			told,
			lookDueAt: (at) => (nextLookAtMs = at),
			// Seen ended by another process: the plan's place the job held is free for this one too.
			ended: (end) => jobSeenEnded(connection.client.runtime, end),
		})
			.catch((error: unknown) => {
				// Failed is an end like done, with the service's reason: no lookup is spent to learn it again.
				if (isOmniVideoError(error) && error.kind === 'job_failed') {
					return { ...last, status: 'failed' as const, rawStatus: 'failed', error: 'reason' in error ? String(error.reason) : error.message, errorCode: error.code, resultUrls: [] };
				}
				throw error;
			})
			.then(async (end) => {
				await keep(end);
				return end;
			})
			// A later schedule for the job may have taken this one's place: that one stays.
			.finally(() => {
				if (this.active.get(job.id) === entry) this.active.delete(job.id);
			});
		// Nobody may be waiting when it ends or fails: the outcome is kept in the store either way.
		ended.catch(() => undefined);
		const watch: Watch = {
			ended,
			nextLookAtMs: () => nextLookAtMs,
			join: (listener) => {
				listeners.add(listener);
				return {
					leave: (cancelled) => {
						listeners.delete(listener);
						if (cancelled && listeners.size === 0) {
							entry.stopped = true;
							stop.abort();
						}
					},
				};
			},
		};
		return watch;
	}

	/**
	 * Where a job's looks are counted from. A job this server made is counted from its create, as
	 * noted, whichever call or process starts the schedule: counted from the schedule's start
	 * instead, the first look of a job picked up late comes early, and the end its progress implies
	 * comes out seconds away, look after look.
	 */
	private async scheduleFrom(fingerprint: string, jobId: string, known: { expectedMs?: number; createdAtMs?: number }): Promise<{ expectedMs?: number; createdAtMs?: number }> {
		const noted = await this.entry(fingerprint, jobId);
		if (noted?.createdAtMs !== undefined && noted.expectedEndAtMs !== undefined) return { createdAtMs: noted.createdAtMs, expectedMs: Math.max(1_000, noted.expectedEndAtMs - noted.createdAtMs) };
		// Noted with its expected end alone: what remains of it.
		if (noted?.expectedEndAtMs !== undefined) return { expectedMs: Math.max(1_000, noted.expectedEndAtMs - this.now()) };
		return known;
	}

	/**
	 * A job of ours whose callback reached a replica (its path names the key): a verified one is its
	 * end, noted as seen; an unverified one is noted for the watching replica to confirm with one
	 * lookup. False for a job these records do not know (forged, or another server's): nothing noted.
	 */
	async heard(fingerprint: string, job: JobRecord, verified: boolean): Promise<boolean> {
		return this.store.run(noteCallback, [jobRecordName(fingerprint, job.id)], { job, verified }, this.now());
	}

	/**
	 * Waits for the job's callback until it is overdue (half its render time past its expected end,
	 * the render time as the key's ended jobs have taught it): a verified one ends the wait with no
	 * request, an unverified one costs one lookup. Undefined when overdue or stopped: the look
	 * schedule takes over.
	 */
	private async untilCallback(connection: Connection, jobId: string, expected: { createdAtMs: number; renderMs: number }, signal: AbortSignal, lookDueAt: (atMs: number) => void): Promise<JobRecord | undefined> {
		const { runtime } = connection.client;
		// Core's estimate is the low end of the 30-90 s a size may take: with it alone, jobs whose signed
		// callbacks were on their way got looked up as overdue (docs/benchmarks.md#measured-rules-in-the-code).
		const overdueAtMs = () => {
			const renderMs = runtime.calibration.calibrated(expected.renderMs);
			return expected.createdAtMs + renderMs + callbackLateMs(renderMs);
		};
		const ended = (job: JobRecord) => {
			// Heard, not looked up: the plan's place the job held is free now, for this process and the others.
			jobSeenEnded(runtime, job);
			// A failure may come at any time: only a video says how long a render takes.
			if (job.status === 'done') learnRenderTime(runtime, job, expected.renderMs);
			return job;
		};
		let confirmedAtMs = 0;
		while (!signal.aborted && this.now() < overdueAtMs()) {
			lookDueAt(overdueAtMs());
			const entry = await this.entry(connection.fingerprint, jobId);
			if (entry?.seen && isTerminal(entry.seen.job)) return ended(entry.seen.job);
			if (entry?.callbackAtMs !== undefined && entry.callbackAtMs > confirmedAtMs) {
				confirmedAtMs = entry.callbackAtMs;
				const job = await connection.client.getJob(jobId, { signal });
				if (isTerminal(job)) return ended(job);
			}
			await sleep(RECORDS_READ_MS, signal).catch(() => undefined);
		}
		return undefined;
	}

	private async entry(fingerprint: string, jobId: string): Promise<JobEntry | undefined> {
		return jobEntryFrom(await this.store.get(jobRecordName(fingerprint, jobId)));
	}
}
