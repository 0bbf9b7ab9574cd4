/**
 * Issue 24 item 4: poll batches over workers. Three executions of 15 rows polled by core on two
 * processes sharing one Pro key (n8n queue mode: two workers), beside the same 45 rows on one
 * process, on the sandbox over HTTP; every count from its journal. Target: the two processes
 * within 3 % of the one on wall ÷ limit and on requests a job, no 429 reaching a row.
 */
import { BENCH_PLANS, runBatch, type SideBySideOptions } from './sideBySide';
import { corePollingOver } from './strategies';
import type { BatchResult } from './measure';
import { perJob, ratio } from './targets';

export const QUEUE_LAYOUTS = [
	{ strategy: 'core polling, 3 executions × 15 rows, 1 process', processes: 1 },
	{ strategy: 'core polling, 3 executions × 15 rows, 2 processes', processes: 2 },
] as const;
const ROWS = 45;
const EXECUTIONS = 3;
/** The two processes against the one: at most this much more, on wall ÷ limit and on requests a job. */
export const QUEUE_MARGIN = 0.03;

/** The layouts on Pro, for each distribution given. */
export async function queueModeRuns(distributions: SideBySideOptions[], show: (r: BatchResult) => void): Promise<BatchResult[]> {
	const pro = BENCH_PLANS.filter((plan) => plan.name === 'Pro');
	const results: BatchResult[] = [];
	for (const options of distributions) {
		for (const plan of pro) {
			for (const layout of QUEUE_LAYOUTS) {
				const result = await runBatch(layout.strategy, plan, { ...options, rows: ROWS }, (s) => corePollingOver(s, layout.processes, EXECUTIONS));
				results.push(result);
				show(result);
			}
		}
	}
	return results;
}

/** The report's table: each layout's figures, the two processes against the one. */
export function queueModeRows(results: BatchResult[]): string[] {
	return results.map((r) => {
		const alone = results.find((o) => o.distribution === r.distribution && o.plan === r.plan && o.strategy === QUEUE_LAYOUTS[0].strategy);
		let verdict = '(reference)';
		if (alone && alone !== r) {
			const [wall, requests] = [ratio(r) / ratio(alone) - 1, perJob(r) / perJob(alone) - 1];
			const met = wall <= QUEUE_MARGIN && requests <= QUEUE_MARGIN && r.surfaced429 === 0;
			verdict = `${met ? 'met' : '**not met**'}: wall ${(wall * 100).toFixed(1)} %, requests ${(requests * 100).toFixed(1)} %`;
		}
		return `| ${r.plan} | ${r.distribution ?? 'log-normal'} | ${r.strategy} | ${ratio(r).toFixed(2)}× | ${perJob(r).toFixed(2)} | ${r.received429} / ${r.surfaced429} | ${r.duplicateJobs} | ${verdict} |`;
	});
}
