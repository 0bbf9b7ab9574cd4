import type { RecordStep } from './recordStep';
import { applyStep } from './recordStep';

/**
 * The one seam every shared record of the server goes through (a create's ledger entry, a job's
 * record, a key's plan and spend, a call's cancellation): small records, each with its own expiry,
 * each changed only by a named atomic step (RecordStep) that reads and writes the few records it
 * names and nothing else, so that a step costs the same with ten records kept or a million.
 * Memory (one process), a file per record under a lock (every process on the machine) and Redis (a
 * script per step, for replicas; on a cluster too) implement it.
 */
export interface StateStore {
	/** Where the records live, for the server's first line on stderr. */
	readonly where: string;
	/** The record as it is now, if it is there and has not expired. */
	get<T>(name: string): Promise<T | undefined>;
	/** Runs the step on the named records in one atomic step across every process using the store. */
	run<A, R>(step: RecordStep<A, R>, names: string[], args: A, nowMs: number): Promise<R>;
	/** This process's name among those sharing the store: the sender a ledger entry names. */
	readonly holder: string;
	/** Whether the process of that name still runs (a create it sent may still be answered to it). */
	alive(holder: string): Promise<boolean>;
	/** Fails when the records cannot be reached now (a replica's readiness), reading or writing none of them. */
	ping(): Promise<void>;
}

interface Kept {
	value: unknown;
	expiresAtMs: number;
}

/** The records of one process only: what `--state-dir none` keeps, and lost with the process. */
export class MemoryStore implements StateStore {
	readonly where = 'memory only (OMNI_VIDEO_MCP_STATE_DIR=none): lost when the server stops';
	readonly holder = String(process.pid);
	private readonly records = new Map<string, Kept>();

	constructor(private readonly clock: () => number = Date.now) {}

	async alive(holder: string): Promise<boolean> {
		return holder === this.holder;
	}

	async ping(): Promise<void> {}

	async get<T>(name: string): Promise<T | undefined> {
		return structuredClone(this.live(name, this.clock())) as T | undefined;
	}

	async run<A, R>(step: RecordStep<A, R>, names: string[], args: A, nowMs: number): Promise<R> {
		const values = names.map((name) => structuredClone(this.live(name, nowMs)));
		return applyStep(step, values, args, nowMs, (index, written) => {
			if (written === null) this.records.delete(names[index]);
			else this.records.set(names[index], written);
		});
	}

	/** How many records are kept (tests and the bench). */
	get size(): number {
		return this.records.size;
	}

	private live(name: string, nowMs: number): unknown {
		const kept = this.records.get(name);
		if (!kept) return undefined;
		if (kept.expiresAtMs <= nowMs) {
			this.records.delete(name);
			return undefined;
		}
		return kept.value;
	}
}
