/**
 * What the scaled-out checks measure, read off the sandbox (its jobs and journal), the proxy's
 * log and the processes' logs: one shape for Wait for Callback and Poll, so that every check's
 * evidence names the same figures.
 */
import type { Sandbox } from '../../sandbox';
import { physicalLimit } from '../../bench/measure';
import { PLANS, type PlanName } from '../../core/types';
import { waitUntil } from './processes';

/** The sandbox's label of a key made by credentialOnOwnKey. */
export const keyLabel = (label: string) => `e2e-${label}`;

export interface RequestFigures {
	requests: number;
	creates: number;
	/** Creates the service accepted (a new job, or on a service that replays keys, the job again). */
	createsAccepted: number;
	/** Accepted creates beyond one for each row that has a job: sent again for a row already made. */
	createsResent: number;
	lookups: number;
	refused: number;
	refusedLookups: number;
	/** Rows that got a job, and the jobs beyond one a row (paid twice). */
	rowsMade: number;
	duplicates: number;
	perJob: number;
	/** The plan's least time for the jobs the rows got (first job of each row), in real ms. */
	limitMs: number;
}

/** Jobs whose prompt starts with `tag`: the batch's, on this sandbox. */
export function jobsTagged(sandbox: Sandbox, tag: string) {
	return [...sandbox.jobs.all.values()].filter((job) => String(job.body.prompt).startsWith(tag));
}

/** Figures for the batch whose prompts start with `tag`, sent on the key labelled `key`, since journal entry `from`. */
export function requestFigures(sandbox: Sandbox, options: { tag: string; key: string; from: number; rows: number; speed: number; plan?: PlanName }): RequestFigures {
	const entries = sandbox.journal.slice(options.from).filter((entry) => entry.key === options.key && entry.path.startsWith('/api/'));
	const creates = entries.filter((entry) => entry.path === '/api/v1/generate');
	const lookups = entries.filter((entry) => entry.path.startsWith('/api/v1/jobs/'));
	const jobs = jobsTagged(sandbox, options.tag).sort((a, b) => a.createdAt - b.createdAt);
	const firstOfRow = new Map<string, (typeof jobs)[number]>();
	for (const job of jobs) if (!firstOfRow.has(String(job.body.prompt))) firstOfRow.set(String(job.body.prompt), job);
	const createsAccepted = creates.filter((entry) => typeof entry.status === 'number' && entry.status < 300).length;
	const renders = [...firstOfRow.values()].map((job) => job.endsAt - job.createdAt);
	return {
		requests: entries.length,
		creates: creates.length,
		createsAccepted,
		createsResent: Math.max(0, createsAccepted - firstOfRow.size),
		lookups: lookups.length,
		refused: entries.filter((entry) => entry.status === 429).length,
		refusedLookups: lookups.filter((entry) => entry.status === 429).length,
		rowsMade: firstOfRow.size,
		duplicates: jobs.length - firstOfRow.size,
		perJob: entries.length / options.rows,
		limitMs: renders.length ? physicalLimit(renders, PLANS[options.plan ?? 'pro']).limitMs / options.speed : 0,
	};
}

/** "53 requests = 1.06 a job (51 creates: 50 accepted, 0 resent; 2 lookups; 1 × 429, 0 on lookups); 50 of 50 rows made, 0 duplicate jobs". */
export function describeFigures(figures: RequestFigures, rows: number): string {
	return `${figures.requests} requests = ${figures.perJob.toFixed(2)} a job (${figures.creates} creates: ${figures.createsAccepted} accepted, ${figures.createsResent} resent for a row already made; ${figures.lookups} lookups; ${figures.refused} × 429, ${figures.refusedLookups} on lookups); ${figures.rowsMade} of ${rows} rows made, ${figures.duplicates} duplicate jobs`;
}

/** The real time at which the sandbox's clock read `virtualMs` (the speed unchanged since). */
export function realTimeOf(sandbox: Sandbox, virtualMs: number): number {
	return Date.now() - sandbox.clock.realMs(sandbox.clock.now() - virtualMs);
}

/** Waits until every job on the sandbox has ended, so that a batch starts with the plan's places free. */
export async function jobsEnded(sandbox: Sandbox, timeoutMs = 300_000): Promise<void> {
	await waitUntil('the earlier jobs to end', async () => [...sandbox.jobs.all.values()].every((job) => job.endsAt <= sandbox.clock.now()), timeoutMs, 250);
}

/** The typical least time of `rows` 720P 4 s jobs on one key of `plan` (renders, or requests at two a job), in real ms at `speed`. */
export function expectedLimitMs(rows: number, typicalRenderMs: number, speed: number, plan: PlanName = 'pro'): number {
	return physicalLimit(Array.from({ length: rows }, () => typicalRenderMs), PLANS[plan]).limitMs / speed;
}
