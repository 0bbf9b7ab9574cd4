import type { PlanRecord } from '../../../core';
import { isPlanRecordName } from '../planRecords';
import type { StateStore } from '../state/store';

/** A scrape waits no longer than this for the records: a slow store shows in readiness, not here. */
const READ_WITHIN_MS = 1_000;

/**
 * The places among the plan's jobs at once held now on each key this process has served: read
 * from the plan's records, where every process on the key holds its places, so that the count is
 * the key's, as the service counts it, not this process's share. Summed over the keys (a metric
 * names no key). The records' names are learnt as the process steps on them.
 */
export class PlanPlaces {
	private readonly plans = new Set<string>();

	constructor(
		private readonly store: StateStore,
		private readonly now: () => number = Date.now,
	) {}

	/** A record the process stepped on: a plan's is read at each count from now on. */
	noted(name: string): void {
		if (isPlanRecordName(name)) this.plans.add(name);
	}

	/** The places held now (a place lapses at its expiry, whether or not a step has pruned it yet). */
	async inUse(): Promise<number> {
		let timer: NodeJS.Timeout | undefined;
		const within = new Promise<never>((_, reject) => {
			timer = setTimeout(() => reject(new Error(`the records did not answer within ${READ_WITHIN_MS} ms`)), READ_WITHIN_MS);
		});
		try {
			const records = await Promise.race([Promise.all([...this.plans].map((name) => this.store.get<Partial<PlanRecord>>(name))), within]);
			const nowMs = this.now();
			return records.reduce((sum, record) => sum + Object.values(record?.places ?? {}).filter((place) => place.expiresAtMs > nowMs).length, 0);
		} finally {
			clearTimeout(timer);
		}
	}
}
