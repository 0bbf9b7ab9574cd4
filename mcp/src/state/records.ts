import type { StateStore } from './store';

/** How long records are kept: as long as the service keeps an idempotency key (docs/mcp.md#retries-and-new-videos). */
export const KEEP_MS = 24 * 60 * 60_000;

/** Drops the entries of a record older than `keepMs` by their own time. */
export function pruneOlderThan<E>(entries: Record<string, E>, atOf: (entry: E) => number, nowMs: number, keepMs = KEEP_MS): void {
	for (const [key, entry] of Object.entries(entries)) if (nowMs - atOf(entry) >= keepMs) delete entries[key];
}

/** One document of the store with its empty form: the shape every record type below uses. */
export class Doc<T extends object> {
	constructor(
		private readonly store: StateStore,
		readonly name: string,
		private readonly empty: () => T,
	) {}

	change<R>(step: (doc: T) => R): Promise<R> {
		return this.store.transact(this.name, this.empty, step);
	}

	read(): Promise<T> {
		return this.store.read(this.name, this.empty);
	}
}
