import type { JobRecord } from '../types';
import { isTerminal } from '../jobs/jobOutcome';

/** A job whose end nobody reported is looked up again at most this often. */
const RECHECK_MS = 60_000;
/** A job counts as late (its callback maybe lost) this long past its expected end, at least. */
const LATE_MARGIN_MS = 60_000;

/** Where a place to fill comes from (see takePlace). */
export type Place = 'freed' | 'spare' | 'idle';

/** One row of a chained batch as the parked execution keeps it. */
export type ChainEntry = { jobId: string; expectedEndAtMs?: number } | { failedKind: string; error?: unknown } | { pending: true };

interface Row {
	state: 'pending' | 'claimed' | 'job' | 'failed';
	jobId?: string;
	/** This process created the job, so a callback for it can only come here (single process). */
	witnessed: boolean;
	expectedEndAtMs: number;
	ended?: JobRecord;
	checkedAtMs?: number;
	failedKind?: string;
	error?: unknown;
}

/**
 * What one process knows of a batch of rows run as a chain behind one callback URL (n8n's Wait
 * for Callback with more rows than the plan runs at once): the first rows' jobs are made before
 * the execution parks, and every job newly seen ended frees one place, which the next row not
 * yet made takes (a "credit"). The rows are the state; nothing else is needed to go on after a
 * restart or on another process: rows whose job this process never saw made are found by
 * creating them again with their idempotency key (the service answers with the job made before),
 * and jobs whose callback went elsewhere are looked up once no row is left to make.
 */
export class CallbackChain {
	private readonly rows: Row[];
	private credits = 0;
	private resumed = false;
	private readonly watchedSinceMs: number;
	private shared = false;

	constructor(
		entries: readonly ChainEntry[],
		options: {
			/** Whether this process made the jobs already listed (it parked the batch itself). */
			witnessed: boolean;
			/** When the jobs already listed should have ended (unless their entry says). */
			expectedEndAtMs: number;
			/**
			 * Since when callbacks can reach this process (the park). A job made here that should have
			 * ended before then may have called back while n8n refused callbacks: it is in doubt.
			 */
			watchedSinceMs?: number;
		},
	) {
		this.watchedSinceMs = options.watchedSinceMs ?? 0;
		this.rows = entries.map((entry) => {
			if ('jobId' in entry) {
				return { state: 'job', jobId: entry.jobId, witnessed: options.witnessed, expectedEndAtMs: entry.expectedEndAtMs ?? options.expectedEndAtMs };
			}
			if ('failedKind' in entry) return { state: 'failed', failedKind: entry.failedKind, error: entry.error, witnessed: false, expectedEndAtMs: 0 };
			return { state: 'pending', witnessed: false, expectedEndAtMs: 0 };
		});
	}

	get size(): number {
		return this.rows.length;
	}

	/** The row a job belongs to, if this process knows it. */
	rowOf(jobId: string): number | undefined {
		const index = this.rows.findIndex((row) => row.jobId === jobId);
		return index < 0 ? undefined : index;
	}

	/**
	 * A row's job became known: made here (`witnessed`), or named by a callback's row number or a
	 * replayed create. False when the row already has another job (the caller ignores the claim).
	 */
	knowJob(row: number, jobId: string, witnessed: boolean, expectedEndAtMs: number): boolean {
		const state = this.rows[row];
		if (!state || state.state === 'failed') return false;
		if (state.state === 'job') return state.jobId === jobId;
		Object.assign(state, { state: 'job', jobId, witnessed, expectedEndAtMs });
		return true;
	}

	/**
	 * A confirmed state of a job (callback, lookup, replayed create). True when this process now
	 * sees it ended for the first time: its place among the plan's jobs is free for the next row.
	 */
	record(job: JobRecord, nowMs: number, heard: 'callback' | 'lookup' = 'lookup'): boolean {
		// Several rows may share one job (identical rows given the job made from the same input).
		const rows = this.rows.filter((candidate) => candidate.jobId === job.id);
		let newlyEnded = false;
		for (const row of rows) {
			row.checkedAtMs = nowMs;
			if (!isTerminal(job) || row.ended) continue;
			row.ended = job;
			newlyEnded = true;
		}
		if (!newlyEnded) return false;
		// One job held one place, however many rows share it. Shared, a job this process only
		// looked up ended has had its callback elsewhere: the process that took it gave the
		// place away already.
		if (heard === 'callback' || !this.shared) this.credits++;
		return true;
	}

	/** Whether a row still waits for its job to be known (a callback naming it may bring it). */
	awaitsJob(row: number): boolean {
		const state = this.rows[row]?.state;
		return state === 'pending' || state === 'claimed';
	}

	/**
	 * Callbacks of this batch also reach another process (several webhook processors): a job this
	 * process knows as running may have ended there, and any callback here may be the batch's
	 * last. From now on every job not seen ended is looked up at each callback (see takeInDoubt),
	 * so that the process that takes the last callback learns the whole batch and resumes it.
	 */
	markShared(): void {
		this.shared = true;
	}

	get isShared(): boolean {
		return this.shared;
	}

	/**
	 * A place to fill, if any: one freed by a job of this batch ('freed'); else one of `spareNow`,
	 * places the limiter has free right now though no job of this batch freed them (other work on
	 * the key ended: without these, a batch parked while others held places would never use more
	 * places than it got then); else, when nothing this process knows of is running while rows
	 * wait (a create failed, or the jobs ended on another process), one place anyway ('idle'):
	 * otherwise nothing would ever make those rows.
	 */
	takePlace(spareNow = 0): Place | undefined {
		if (!this.hasRowToMake()) return undefined;
		if (this.credits > 0) {
			this.credits--;
			return 'freed';
		}
		if (spareNow > 0) return 'spare';
		return this.rows.some((row) => row.state === 'claimed' || (row.state === 'job' && !row.ended)) ? undefined : 'idle';
	}

	/** The place was not used after all (the row's job existed already, or could not be made). */
	givePlaceBack(place: Place): void {
		if (place === 'freed') this.credits++;
	}

	/**
	 * Jobs of this batch still running that this process did not make: another process's limiter
	 * holds their places, not this one's, so its free places are that many fewer.
	 */
	runningElsewhere(): number {
		return this.rows.filter((row) => row.state === 'job' && !row.ended && !row.witnessed).length;
	}

	/** The first row not yet made, now claimed by the caller (who makes it or gives it back). */
	claimRow(): number | undefined {
		const index = this.rows.findIndex((row) => row.state === 'pending');
		if (index < 0) return undefined;
		this.rows[index].state = 'claimed';
		return index;
	}

	/** A claimed row was not made after all; the next place takes it again. */
	unclaim(row: number): void {
		if (this.rows[row]?.state === 'claimed') this.rows[row].state = 'pending';
	}

	/** A row whose job cannot be made: its item says why. */
	failRow(row: number, failedKind: string, error: unknown): void {
		const state = this.rows[row];
		if (!state || state.state === 'job') return;
		Object.assign(state, { state: 'failed', failedKind, error });
	}

	hasRowToMake(): boolean {
		return this.rows.some((row) => row.state === 'pending');
	}

	get complete(): boolean {
		return this.rows.every((row) => row.state === 'failed' || (row.state === 'job' && row.ended !== undefined));
	}

	/** True exactly once, when every row has ended: the caller that gets it resumes the run. */
	claimResume(): boolean {
		if (!this.complete || this.resumed) return false;
		this.resumed = true;
		return true;
	}

	/** Every row's outcome, in row order (once complete). */
	outcomes(): Array<{ job: JobRecord } | { failedKind: string; error?: unknown }> {
		return this.rows.map((row) => (row.ended ? { job: row.ended } : { failedKind: row.failedKind ?? 'other', error: row.error }));
	}

	/**
	 * Jobs worth a lookup now; none while callbacks arrive where they should. A job made elsewhere
	 * (before a restart, on another process) and not seen ended here is looked up once every row is
	 * made: its callback may have gone to that other process; any job is looked up when late.
	 */
	takeInDoubt(nowMs: number): string[] {
		const tail = !this.rows.some((row) => row.state === 'pending' || row.state === 'claimed');
		const ids: string[] = [];
		for (const row of this.rows) {
			if (row.state !== 'job' || row.ended || row.jobId === undefined) continue;
			const unseenElsewhere = tail && !row.witnessed && row.checkedAtMs === undefined;
			// Made here, but due to end before this process could hear of it (see watchedSinceMs).
			const endedUnheard = row.witnessed && row.checkedAtMs === undefined && row.expectedEndAtMs < this.watchedSinceMs;
			const late = nowMs > row.expectedEndAtMs + LATE_MARGIN_MS;
			const due = row.checkedAtMs === undefined || nowMs - row.checkedAtMs >= RECHECK_MS;
			if (this.shared || unseenElsewhere || endedUnheard || (late && due)) {
				row.checkedAtMs = nowMs;
				ids.push(row.jobId);
			}
		}
		return ids;
	}

	/** Jobs taken by takeInDoubt that were not looked at after all. */
	untake(jobIds: readonly string[]): void {
		for (const row of this.rows) {
			if (row.jobId !== undefined && jobIds.includes(row.jobId)) row.checkedAtMs = undefined;
		}
	}
}
