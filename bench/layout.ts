/* eslint-disable no-console -- benchmarks run by people, never shipped */
/**
 * Issue 24 item 6: strategy (d), the n8n node's Wait for Callback (signed callbacks), with the
 * execution's callbacks spread over 1, 2 and 4 webhook processes behind a round-robin balancer
 * (n8n's chart in queue mode), 50 and 500 items, Pro and Premium. A batch the node refuses as it
 * stands (its item cap) is reported "not supported yet", not measured.
 */
import { BENCH_PLANS, runBatch, type SideBySideOptions } from './sideBySide';
import { NotSupportedYet, n8nWaitForCallback } from './n8nCallback';
import type { BatchResult } from './measure';
import { perJob, ratio } from './targets';

const PROCESSES = [1, 2, 4];
const ITEMS = [50, 500];

export interface LayoutEntry {
	plan: string;
	processes: number;
	items: number;
	result?: BatchResult;
	/** Why the batch was not measured (the node refused it). */
	notSupported?: string;
	/** The run failed otherwise: what it said (the bench goes on; the report shows it). */
	failed?: string;
}

export const layoutName = (processes: number, items: number) => `(d) signed, ${items} items, ${processes} webhook process${processes > 1 ? 'es' : ''}`;

/** Every layout on both plans, with the bench's options. */
export async function layoutRuns(options: SideBySideOptions, show: (r: BatchResult) => void): Promise<LayoutEntry[]> {
	const entries: LayoutEntry[] = [];
	for (const items of ITEMS) {
		for (const plan of BENCH_PLANS) {
			for (const processes of PROCESSES) {
				const entry: LayoutEntry = { plan: plan.name, processes, items };
				try {
					entry.result = await runBatch(layoutName(processes, items), plan, { ...options, rows: items }, (s) => n8nWaitForCallback(s, true, processes), 'sandbox', 'n8n on the sandbox’s clock');
					show(entry.result);
				} catch (error) {
					if (error instanceof NotSupportedYet) entry.notSupported = error.message;
					else entry.failed = error instanceof Error ? error.message : String(error);
					console.log(`${plan.name} ${layoutName(processes, items)}: ${entry.notSupported ? 'not supported yet' : 'failed'} (${entry.notSupported ?? entry.failed})`);
				}
				entries.push(entry);
			}
		}
	}
	return entries;
}

/** The report's table rows. */
export function layoutRows(entries: LayoutEntry[]): string[] {
	return entries.map(({ plan, processes, items, result: r, notSupported, failed }) =>
		r
			? `| ${plan} | ${items} | ${processes} | ${ratio(r).toFixed(2)}× | ${perJob(r).toFixed(2)} | ${r.received429} / ${r.surfaced429} | ${r.duplicateJobs} | ${r.failedRows + r.unknownJobs} | ${((r.wallMs - r.lastEndMs) / 1000).toFixed(1)} s |`
			: `| ${plan} | ${items} | ${processes} | ${notSupported ? 'not supported yet' : '**failed**'} | | | | | ${notSupported ?? failed ?? ''} |`,
	);
}
