/**
 * The soak's rows, as a marketing team's queue fills: evenly over each simulated day, mostly short
 * 720P and 1080P clips, a few 4K ones; one row in 200 against the content policy (failed at once)
 * and one in 200 that the service fails each time it is made (made again up to the retries, then
 * failed). Row n is the same in every run, so runs compare.
 */
import type { Resolution } from '../../core/types';
import type { Row } from '../../test/e2e/dataTables';

const SIZES: Array<{ resolution: Resolution; duration: number }> = [
	{ resolution: '720P', duration: 4 },
	{ resolution: '720P', duration: 6 },
	{ resolution: '1080P', duration: 6 },
	{ resolution: '720P', duration: 8 },
	{ resolution: '1080P', duration: 8 },
	{ resolution: '720P', duration: 5 },
	{ resolution: '1080P', duration: 4 },
	{ resolution: '720P', duration: 10 },
	{ resolution: '1080P', duration: 10 },
	{ resolution: '4K', duration: 6 },
];

/** What the prompt of row `n` asks of the sandbox, if anything. */
export function failureOf(n: number): 'job-fails-content-policy' | 'job-fails-internal' | undefined {
	if (n % 200 === 37) return 'job-fails-content-policy';
	if (n % 200 === 137) return 'job-fails-internal';
	return undefined;
}

/** Row `n` (from 1) of the run tagged `tag`: its prompt names both, so the sandbox's jobs are traced to rows. */
export function soakRow(tag: string, n: number): Row {
	const failure = failureOf(n);
	return {
		prompt: `${tag} row ${n}: a product shot on a turning table${failure ? ` [sandbox:${failure}]` : ''}`,
		...SIZES[n % SIZES.length],
		status: 'pending',
	};
}

/** How many rows are due `simulatedMs` into the run: rowsPerDay a day, evenly, none after the last day. */
export function rowsDue(simulatedMs: number, options: { rowsPerDay: number; days: number }): number {
	const dayMs = 86_400_000;
	const total = Math.round(options.rowsPerDay * options.days);
	return Math.min(total, Math.floor((Math.max(0, simulatedMs) / dayMs) * options.rowsPerDay));
}

/** Row number from a job's prompt (`… row 12: …`), or undefined for a job of another run. */
export function rowOfPrompt(tag: string, prompt: unknown): number | undefined {
	if (typeof prompt !== 'string' || !prompt.startsWith(`${tag} row `)) return undefined;
	const n = Number.parseInt(prompt.slice(`${tag} row `.length), 10);
	return Number.isFinite(n) ? n : undefined;
}
