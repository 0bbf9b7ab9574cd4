import type { BatchResult } from './measure';
import type { MemoryResult } from './memory';

export interface Verdict {
	target: string;
	met: boolean;
	/** What was measured against the target, and why it is missed when it is. */
	detail: string;
}

export const STRATEGIES = {
	signed: '(a) core, signed callbacks',
	lookup: '(b) core, callbacks confirmed by lookup',
	polling: '(c) core polling',
	n8nSigned: '(d) n8n Wait for Callback, signed',
	n8nLookup: '(d) n8n Wait for Callback, by lookup',
	naive5: '(e) naive loop, GET every 5 s',
	naive10: '(f) naive loop, GET every 10 s',
} as const;

/** Polling's target (issue 20): wall ÷ limit and requests a job, both at most. */
export const POLLING_TARGET = { ratio: 1.08, perJob: 2.6 } as const;

export const ratio = (r: BatchResult) => r.wallMs / r.limitMs;
export const perJob = (r: BatchResult) => r.apiRequests / r.jobs;
const fixed = (value: number, digits = 2) => value.toFixed(digits);
export const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

/** The columns a strategy must beat the naive loop on (lower is better in each). */
const COLUMNS: Array<[string, (r: BatchResult) => number]> = [
	['wall ÷ limit', ratio],
	['requests/job', perJob],
	['429s received', (r) => r.received429],
	['429s surfaced', (r) => r.surfaced429],
	['duplicate jobs', (r) => r.duplicateJobs],
	['known-after-end median', (r) => r.knownDelayMedianMs],
	['known-after-end p95', (r) => r.knownDelayP95Ms],
];

/** The issue's targets, checked against one run; `why` explains a miss where the cause is known. */
export function verdicts(
	results: BatchResult[],
	why: Partial<Record<string, string>> = {},
): Array<Verdict & { plan: string; strategy: string; distribution?: string }> {
	const out: Array<Verdict & { plan: string; strategy: string; distribution?: string }> = [];
	const push = (r: BatchResult, target: string, met: boolean, measured: string) =>
		out.push({ plan: r.plan, strategy: r.strategy, distribution: r.distribution, target, met, detail: met ? measured : `${measured}${why[r.strategy] ? `. ${why[r.strategy]}` : ''}` });
	for (const r of results) {
		const measured = `${fixed(ratio(r))}×, ${fixed(perJob(r))} requests/job, ${r.received429} 429s`;
		switch (r.strategy) {
			case STRATEGIES.signed:
				push(r, '0 429s; ≤ 1.02 requests/job', r.received429 === 0 && perJob(r) <= 1.02, measured);
				break;
			case STRATEGIES.lookup:
				push(r, '0 429s; ≤ 2.02 requests/job', r.received429 === 0 && perJob(r) <= 2.02, measured);
				break;
			case STRATEGIES.polling:
				// Issue 20: on render times drawn evenly across 30–90 s, with no progress reported.
				push(r, `≤ ${POLLING_TARGET.ratio}× the limit at ≤ ${POLLING_TARGET.perJob} requests/job`, ratio(r) <= POLLING_TARGET.ratio && perJob(r) <= POLLING_TARGET.perJob, measured);
				break;
			case STRATEGIES.n8nSigned:
			case STRATEGIES.n8nLookup: {
				const maxPerJob = r.strategy === STRATEGIES.n8nSigned ? 1.1 : 2.1;
				const afterLast = (r.wallMs - r.lastEndMs) / 1000;
				push(
					r,
					`≤ ${maxPerJob} requests/job; wall ≤ 1.05× the limit; resumed ≤ 5 s after the last job ends`,
					perJob(r) <= maxPerJob && ratio(r) <= 1.05 && afterLast <= 5,
					`${measured}; resumed ${fixed(afterLast, 1)} s after the last job ended`,
				);
				break;
			}
			default: {
				// The naive loops: every core strategy must beat them on every column.
				const rivals = results.filter((o) => o.plan === r.plan && o.distribution === r.distribution && [STRATEGIES.signed, STRATEGIES.lookup, STRATEGIES.polling].includes(o.strategy as never));
				const losses = rivals.flatMap((o) =>
					COLUMNS.filter(([, value]) => {
						const [mine, theirs] = [value(o), value(r)];
						// Both at zero is a tie nobody loses; otherwise core must be strictly lower.
						return !(mine < theirs || (mine === 0 && theirs === 0));
					}).map(([name]) => `${o.strategy.slice(0, 3)} on ${name}`),
				);
				push(r, 'beaten on every column by (a), (b) and (c)', losses.length === 0, losses.length === 0 ? 'beaten on every column' : `not beaten: ${losses.join('; ')}`);
			}
		}
	}
	return out;
}

export function memoryVerdict(result: MemoryResult, why?: string): Verdict {
	const growth = result.peakGrowthBytes / result.fileBytes;
	if (result.mode === 'default') {
		const met = growth <= 1.25;
		return { target: '≤ 1.25× the file', met, detail: `+${mb(result.peakGrowthBytes)} (${fixed(growth)}× the file)${met || !why ? '' : `. ${why}`}` };
	}
	const met = result.peakGrowthBytes < 64 * 1024 * 1024;
	return { target: '< 64 MB', met, detail: `+${mb(result.peakGrowthBytes)}${met || !why ? '' : `. ${why}`}` };
}
