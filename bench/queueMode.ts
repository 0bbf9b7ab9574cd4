/**
 * Issue 24 item 4: poll batches over workers. Three executions of 15 rows polled by core on two
 * processes sharing one Pro key (n8n queue mode: two workers), beside the same 45 rows on one
 * process, on the sandbox over HTTP on virtual time, on docs/api.md's reading and on the spec's
 * strictest (no X-RateLimit-*, 429s without Retry-After that do not say which limit); every count
 * from the sandbox's journal and job store. Target: the two processes within 3 % of the one on
 * wall ÷ limit and on requests a job, no 429 reaching a row.
 */
import type { Sandbox } from '../sandbox';
import type { ServiceProfileName } from '../sandbox/service';
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
const SERVICES: ServiceProfileName[] = ['default', 'spec'];
/**
 * Batches (render-time seeds) per layout; the table shows their means. One batch's wall moves by
 * ±10 % between the layouts with the order in which ends and looks meet, far more than the margin.
 */
export const QUEUE_BATCHES = 24;
/** The two processes against the one: at most this much more, on wall ÷ limit and on requests a job. */
export const QUEUE_MARGIN = 0.03;

/** Where one run's requests went, beyond one create and one look a job. */
export interface RequestCauses {
	/** Creates refused 429 before the batch's first job ended (processes finding each other). */
	refusedAtStart: number;
	/** Creates refused 429 later (a process reaching for a place the other took or kept). */
	refusedLater: number;
	/** Lookups that found their job still running. */
	lookupsEarly: number;
	/** Lookups refused 429. */
	lookups429: number;
}

export type QueueResult = BatchResult & { service: ServiceProfileName; causes: RequestCauses };

/** Reads the causes off the sandbox's journal: a lookup's job is in its path, its end in the job store. */
function requestCauses(sandbox: Sandbox): RequestCauses {
	const jobs = [...sandbox.jobs.all.values()];
	const firstEnd = Math.min(...jobs.map((job) => job.endsAt));
	const api = sandbox.journal.filter((entry) => entry.path.startsWith('/api/'));
	const refused = api.filter((entry) => entry.method === 'POST' && entry.path === '/api/v1/generate' && entry.status === 429);
	const lookups = api.filter((entry) => entry.method === 'GET' && entry.path.startsWith('/api/v1/jobs/'));
	const early = lookups.filter((entry) => {
		const job = sandbox.jobs.all.get(decodeURIComponent(entry.path.slice('/api/v1/jobs/'.length)));
		return entry.status === 200 && job !== undefined && Date.parse(entry.at) < job.endsAt;
	});
	const atStart = refused.filter((entry) => Date.parse(entry.at) < firstEnd).length;
	return { refusedAtStart: atStart, refusedLater: refused.length - atStart, lookupsEarly: early.length, lookups429: lookups.filter((entry) => entry.status === 429).length };
}

/** The layouts on Pro, for each distribution given, on both readings, QUEUE_BATCHES seeds each, on virtual time. */
export async function queueModeRuns(distributions: SideBySideOptions[], show: (r: BatchResult) => void): Promise<QueueResult[]> {
	const pro = BENCH_PLANS.filter((plan) => plan.name === 'Pro');
	const results: QueueResult[] = [];
	for (const service of SERVICES) {
		for (const options of distributions) {
			for (const plan of pro) {
				for (let batch = 0; batch < QUEUE_BATCHES; batch++) {
					const renderTimes = { ...options.renderTimes, seed: options.renderTimes.seed + batch };
					for (const layout of QUEUE_LAYOUTS) {
						let causes: RequestCauses | undefined;
						const result = await runBatch(layout.strategy, plan, { ...options, rows: ROWS, renderTimes, virtual: true, service }, async (setup) => {
							const outcome = await corePollingOver(setup, layout.processes, EXECUTIONS);
							causes = requestCauses(setup.sandbox);
							return outcome;
						});
						if (!causes) throw new Error('the run ended without its counts');
						results.push({ ...result, service, causes });
						show(result);
					}
				}
			}
		}
	}
	return results;
}

interface QueueMean {
	service: string;
	plan: string;
	distribution: string;
	strategy: string;
	ratio: number;
	perJob: number;
	received429: number;
	surfaced429: number;
	duplicateJobs: number;
	causes: RequestCauses;
}

/** Each layout's means over its batches. */
export function queueModeMeans(results: QueueResult[]): QueueMean[] {
	const groups = new Map<string, QueueResult[]>();
	for (const r of results) {
		const key = `${r.service ?? 'default'}|${r.plan}|${r.distribution ?? 'log-normal'}|${r.strategy}`;
		groups.set(key, [...(groups.get(key) ?? []), r]);
	}
	return [...groups.values()].map((runs) => {
		const mean = (value: (r: QueueResult) => number) => runs.reduce((sum, r) => sum + value(r), 0) / runs.length;
		return {
			service: runs[0].service ?? 'default',
			plan: runs[0].plan,
			distribution: runs[0].distribution ?? 'log-normal',
			strategy: runs[0].strategy,
			ratio: mean(ratio),
			perJob: mean(perJob),
			received429: mean((r) => r.received429),
			surfaced429: runs.reduce((sum, r) => sum + r.surfaced429, 0),
			duplicateJobs: runs.reduce((sum, r) => sum + r.duplicateJobs, 0),
			causes: {
				refusedAtStart: mean((r) => r.causes?.refusedAtStart ?? 0),
				refusedLater: mean((r) => r.causes?.refusedLater ?? 0),
				lookupsEarly: mean((r) => r.causes?.lookupsEarly ?? 0),
				lookups429: mean((r) => r.causes?.lookups429 ?? 0),
			},
		};
	});
}

/** The report's table: each layout's means, the two processes against the one. */
export function queueModeRows(results: QueueResult[]): string[] {
	const means = queueModeMeans(results);
	return means.map((m) => {
		const alone = means.find((o) => o.service === m.service && o.distribution === m.distribution && o.plan === m.plan && o.strategy === QUEUE_LAYOUTS[0].strategy);
		let verdict = '(reference)';
		if (alone && alone !== m) {
			const [wall, requests] = [m.ratio / alone.ratio - 1, m.perJob / alone.perJob - 1];
			const met = wall <= QUEUE_MARGIN && requests <= QUEUE_MARGIN && m.surfaced429 === 0;
			verdict = `${met ? 'met' : '**not met**'}: wall ${(wall * 100).toFixed(1)} %, requests ${(requests * 100).toFixed(1)} %`;
		}
		const c = m.causes;
		return `| ${m.service} | ${m.distribution} | ${m.strategy} | ${m.ratio.toFixed(3)}× | ${m.perJob.toFixed(2)} | ${m.received429.toFixed(1)} / ${m.surfaced429} | ${c.refusedAtStart.toFixed(1)} / ${c.refusedLater.toFixed(1)} | ${c.lookupsEarly.toFixed(1)} | ${m.duplicateJobs} | ${verdict} |`;
	});
}
