import { isOmniVideoError, isTerminal, type JobRecord } from '../../core';
import { sleep } from './sleep';
import type { Looker, Seen } from './jobRecords';
import type { StateStore } from './state/store';

/** How often a process waiting on another's looks, or on a callback to any replica, reads the records (no request). */
export const RECORDS_READ_MS = 250;
/**
 * How long past its next look due a process's hold on a job's looks lasts: past it (the process was
 * stopped, or its look waits on the plan's windows that long) another process takes over.
 */
const GRACE_MS = 15_000;
/** How often a process waiting on another's looks asks whether that one still runs. */
const ALIVE_ASK_MS = 2_000;

/** A job's record, as far as the hold on its looks reads it. */
export interface HeldJob {
	seen?: Seen;
	looker?: Looker;
}

/** The job's record: read, and its hold changed by one atomic step each across the processes sharing the records. */
export interface HeldJobRecord {
	read(): Promise<HeldJob | undefined>;
	/** Takes the looks unless another process (not `gone`) holds them; true also when the job is not recorded. */
	take(me: string, untilMs: number, gone?: string): Promise<boolean>;
	/** The holder's next look is due at `nextLookAtMs`; its hold lasts until `untilMs`. */
	hold(me: string, untilMs: number, nextLookAtMs: number): Promise<void>;
	/** The holder gives the looks up. */
	drop(me: string): Promise<void>;
}

export interface LookPlan {
	/** This process's looks until the job's end, told each time when the next look is due. */
	look(lookDueAt: (atMs: number) => void): Promise<JobRecord>;
	/** A look another process made at the still-running job. */
	told(job: JobRecord): void;
	/** When the next look is due, this process's or another's. */
	lookDueAt(atMs: number): void;
	/** The job was seen ended by another process. */
	ended(job: JobRecord): void;
}

/**
 * One process looks a job up for every process sharing the records (replicas behind a proxy send
 * an agent's calls about one job to different ones): the first to claim it holds it for as long as
 * its looks are due, noting when the next one is; the others read the records until the job is seen
 * ended, and take over when the holder stops, is found gone, or its hold lapses. Records
 * unreadable: this process looks itself.
 */
export async function lookOrFollow(record: HeldJobRecord, store: Pick<StateStore, 'holder' | 'alive'>, now: () => number, signal: AbortSignal, plan: LookPlan): Promise<JobRecord> {
	const me = store.holder;
	let toldAtMs = 0;
	let askedAliveAtMs = 0;
	for (;;) {
		const held = await record.read().catch(() => undefined);
		if (held?.seen && isTerminal(held.seen.job)) {
			plan.ended(held.seen.job);
			return held.seen.job;
		}
		const holder = held?.looker && held.looker.by !== me && held.looker.untilMs > now() ? held.looker.by : undefined;
		// A holder killed (a replica's crash) is not waited out to its hold's end: asked every few seconds.
		let gone: string | undefined;
		if (holder !== undefined && now() - askedAliveAtMs >= ALIVE_ASK_MS) {
			askedAliveAtMs = now();
			if (!(await store.alive(holder).catch(() => true))) gone = holder;
		}
		if ((holder === undefined || gone !== undefined) && (await claim(record, me, now, gone))) return lookHolding(record, me, plan);
		if (held?.looker?.nextLookAtMs !== undefined) plan.lookDueAt(held.looker.nextLookAtMs);
		if (held?.seen && held.seen.seenAtMs > toldAtMs) {
			toldAtMs = held.seen.seenAtMs;
			plan.told(held.seen.job);
		}
		await sleep(RECORDS_READ_MS, signal);
	}
}

/** Takes the job's looks unless another process (not `gone`) holds them; true also when the records cannot say. */
function claim(record: HeldJobRecord, me: string, now: () => number, gone?: string): Promise<boolean> {
	return record.take(me, now() + GRACE_MS, gone).catch(() => true);
}

/** Looks the job up, noting each look due as the hold's new end; gives the hold up when stopped short of the job's end. */
async function lookHolding(record: HeldJobRecord, me: string, plan: LookPlan): Promise<JobRecord> {
	let noted = 0;
	const lookDueAt = (atMs: number) => {
		plan.lookDueAt(atMs);
		// A write when the look due moves, not at each read of the records while a callback is awaited.
		if (Math.abs(atMs - noted) < 1_000) return;
		noted = atMs;
		record.hold(me, atMs + GRACE_MS, atMs).catch(() => undefined);
	};
	try {
		return await plan.look(lookDueAt);
	} catch (error) {
		// Stopped or given up, another process may look now; failed, the outcome is written next.
		if (!(isOmniVideoError(error) && error.kind === 'job_failed')) record.drop(me).catch(() => undefined);
		throw error;
	}
}
