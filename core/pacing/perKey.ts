/** Every per-key registry of the process, so that a key refused by the service can be let go of in all at once. */
const registries: Map<string, unknown>[] = [];

/** Registers a process-wide map keyed by key fingerprint (see forgetKey). */
export function keyRegistry<T>(all: Map<string, T>): Map<string, T> {
	registries.push(all);
	return all;
}

/**
 * One instance per API key in this process (see keyFingerprint), made on first use: what one
 * key learns (render times, jobs seen ended) serves every node, item and execution using it.
 */
export function perKey<T>(make: () => T): (limiterKey: string) => T {
	const all = keyRegistry(new Map<string, T>());
	return (limiterKey) => {
		let value = all.get(limiterKey);
		if (value === undefined) {
			value = make();
			all.set(limiterKey, value);
		}
		return value;
	};
}

/**
 * Lets go of everything this process keeps for a key (its limiter, learned render times, jobs
 * seen): for a key the service refused, so that a server open to anyone does not keep an entry for
 * every wrong key sent to it. A client made for the key later starts afresh.
 */
export function forgetKey(limiterKey: string): void {
	for (const all of registries) all.delete(limiterKey);
}

/** How many keys this process keeps anything for. */
export function keysHeld(): number {
	const keys = new Set<string>();
	for (const all of registries) for (const key of all.keys()) keys.add(key);
	return keys.size;
}
