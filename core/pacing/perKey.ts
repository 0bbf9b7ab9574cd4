/**
 * One instance per API key in this process (see keyFingerprint), made on first use: what one
 * key learns (render times, jobs seen ended) serves every node, item and execution using it.
 */
export function perKey<T>(make: () => T): (limiterKey: string) => T {
	const all = new Map<string, T>();
	return (limiterKey) => {
		let value = all.get(limiterKey);
		if (value === undefined) {
			value = make();
			all.set(limiterKey, value);
		}
		return value;
	};
}
