/** Logs of request times (ascending), as the rate windows keep them. */

/**
 * A log (ascending) that has, after any moment, as many entries as the larger of `a` and `b` has:
 * the i-th latest entry is the later of theirs.
 */
export function countsAtLeast(a: readonly number[], b: readonly number[]): number[] {
	const latestFirst = (log: readonly number[]) => [...log].sort((x, y) => y - x);
	const [x, y] = [latestFirst(a), latestFirst(b)];
	const merged = Array.from({ length: Math.max(x.length, y.length) }, (_, i) => Math.max(x[i] ?? -Infinity, y[i] ?? -Infinity));
	return merged.reverse();
}

/** `log` without one entry for each of `entries` (by time). */
export function withoutEach(log: readonly number[], entries: readonly number[]): number[] {
	const left = [...log];
	for (const at of entries) {
		const index = left.lastIndexOf(at);
		if (index >= 0) left.splice(index, 1);
	}
	return left;
}

/** Both logs as one, ascending. */
export function mergedLog(a: readonly number[], b: readonly number[]): number[] {
	return [...a, ...b].sort((x, y) => x - y);
}
