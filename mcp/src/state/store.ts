/**
 * The one seam every shared record of the server goes through (the ledger, the spend, the plan's
 * pacing, the jobs' look schedule): named JSON documents, each changed in one atomic step across
 * every process that uses the same store. Memory (one process), files under a lock (every process
 * on the machine), and the next backend (Redis, for replicas) implement this and nothing else.
 */
export interface StateStore {
	/** Where the records live, for the server's first line on stderr. */
	readonly where: string;
	/**
	 * Reads the document (or `empty()`), runs `change` on it, writes it back when `change` did not
	 * throw, and answers what `change` returned: no other step on the document comes in between.
	 */
	transact<T extends object, R>(name: string, empty: () => T, change: (doc: T) => R): Promise<R>;
	/** The document as it is now (a copy), without a write. */
	read<T extends object>(name: string, empty: () => T): Promise<T>;
	/** This process's name among those sharing the store: the sender a ledger entry names. */
	readonly holder: string;
	/** Whether the process of that name still runs (a create it sent may still be answered to it). */
	alive(holder: string): Promise<boolean>;
	/** Fails when the records cannot be reached now (a replica's readiness), reading or writing none of them. */
	ping(): Promise<void>;
}

/** The records of one process only: what `--state-dir none` keeps, and lost with the process. */
export class MemoryStore implements StateStore {
	readonly where = 'memory only (OMNI_VIDEO_MCP_STATE_DIR=none): lost when the server stops';
	readonly holder = String(process.pid);
	private readonly docs = new Map<string, unknown>();

	async alive(holder: string): Promise<boolean> {
		return holder === this.holder;
	}

	async ping(): Promise<void> {}

	async transact<T extends object, R>(name: string, empty: () => T, change: (doc: T) => R): Promise<R> {
		const doc = structuredClone((this.docs.get(name) as T | undefined) ?? empty());
		const answer = change(doc);
		this.docs.set(name, doc);
		return answer;
	}

	async read<T extends object>(name: string, empty: () => T): Promise<T> {
		return structuredClone((this.docs.get(name) as T | undefined) ?? empty());
	}
}
