/* eslint-disable no-console, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- a command-line tool for contributors; never shipped */
/**
 * `npx tsx tools/timeline.ts FILE [PLAN]`: reads a scaled check's timeline (written by the
 * end-to-end suite when E2E_TIMELINE_DIR is set, test/e2e/timeline.ts) and prints, per 5 minutes of
 * the sandbox's clock from the first create: the places in use, creates, lookups, the requests in
 * the sliding hour, and the callbacks' answers; then when the lookups came after their job's end,
 * how long accepted callbacks took, and the least time the key's plan (PLAN, `pro` unless given)
 * allows these jobs with the windows sliding. Where a batch's wall time goes, at a glance.
 */
import { readFileSync } from 'node:fs';
import { physicalLimit } from '../bench/measure';
import { rendersInCreationOrder, slidingWindowFloorMs } from '../bench/slidingFloor';
import { PLANS, type PlanName } from '../core/types';

interface Timeline {
	speed: number;
	endedAt: number;
	journal: { at: string; path: string; status: number | string }[];
	jobs: { id: string; createdAt: number; endsAt: number }[];
	attempts: { jobId: string; at: string; status?: number; error?: string }[];
}

const BUCKET_MS = 5 * 60_000;
const HOUR_MS = 3_600_000;

const timeline = JSON.parse(readFileSync(process.argv[2], 'utf8')) as Timeline;
const at = (entry: { at: string }) => Date.parse(entry.at);
const api = timeline.journal.filter((entry) => entry.path.startsWith('/api/'));
const creates = api.filter((entry) => entry.path === '/api/v1/generate');
const lookups = api.filter((entry) => entry.path.startsWith('/api/v1/jobs/'));
const start = Math.min(...timeline.jobs.map((job) => job.createdAt));
const minutes = (ms: number) => (ms / 60_000).toFixed(1);

console.log(`×${timeline.speed}: ${timeline.jobs.length} jobs, ${api.length} requests (${creates.length} creates, ${lookups.length} lookups, ${api.filter((entry) => entry.status === 429).length} × 429)`);
console.log(`last job ended at ${minutes(Math.max(...timeline.jobs.map((job) => job.endsAt)) - start)} min, the check at ${minutes(timeline.endedAt - start)} min`);
for (let from = start; from < timeline.endedAt; from += BUCKET_MS) {
	const to = from + BUCKET_MS;
	const busyMs = timeline.jobs.reduce((sum, job) => sum + Math.max(0, Math.min(job.endsAt, to) - Math.max(job.createdAt, from)), 0);
	const within = <T extends { at: string }>(list: T[]) => list.filter((entry) => at(entry) >= from && at(entry) < to);
	const hour = api.filter((entry) => at(entry) > to - HOUR_MS && at(entry) <= to).length;
	const answers: Record<string, number> = {};
	for (const attempt of within(timeline.attempts)) {
		const answer = String(attempt.status ?? attempt.error ?? '?');
		answers[answer] = (answers[answer] ?? 0) + 1;
	}
	const made = within(creates);
	console.log(
		`${minutes(from - start).padStart(5)} min: places ${(busyMs / BUCKET_MS).toFixed(1).padStart(4)}, creates ${String(made.length).padStart(3)} (${made.filter((entry) => entry.status === 429).length} × 429), lookups ${String(within(lookups).length).padStart(3)}, the hour at its end ${hour}, callbacks ${JSON.stringify(answers)}`,
	);
}

const jobs = new Map(timeline.jobs.map((job) => [job.id, job]));
const afterEnd = lookups.map((entry) => {
	const job = jobs.get(entry.path.split('/').pop() ?? '');
	return job ? Math.round((at(entry) - job.endsAt) / 1000) : NaN;
});
console.log(`lookups, seconds after their job's end: ${afterEnd.join(' ')}`);
const firstAccepted = new Map<string, number>();
for (const attempt of timeline.attempts) {
	if (attempt.status !== undefined && attempt.status < 300 && !firstAccepted.has(attempt.jobId)) firstAccepted.set(attempt.jobId, at(attempt));
}
const delays = timeline.jobs.filter((job) => firstAccepted.has(job.id)).map((job) => (firstAccepted.get(job.id)! - job.endsAt) / 1000).sort((a, b) => a - b);
const quantile = (share: number) => delays[Math.floor(share * (delays.length - 1))]?.toFixed(0);
console.log(`jobs without an accepted callback: ${timeline.jobs.length - firstAccepted.size}; accepted callbacks, seconds after the job's end: median ${quantile(0.5)}, 90 % ${quantile(0.9)}, most ${quantile(1)}`);
const lastCreate = Math.max(...creates.filter((entry) => typeof entry.status === 'number' && entry.status < 300).map(at));
console.log(`last accepted create at ${minutes(lastCreate - start)} min; creates after the first hour: ${creates.filter((entry) => at(entry) - start > HOUR_MS).length}`);

const planName = (process.argv[3] ?? 'pro') as PlanName;
const plan = PLANS[planName];
if (!plan) throw new Error(`unknown plan ${planName}: one of ${Object.keys(PLANS).join(', ')}`);
const renders = rendersInCreationOrder(timeline.jobs);
const oneHour = physicalLimit(renders, plan).limitMs;
const floor = (lookups: 0 | 1) => {
	const ms = slidingWindowFloorMs(renders, plan, lookups);
	return `${minutes(ms)} min (${(ms / oneHour).toFixed(2)}× the checks' limit)`;
};
console.log(
	`${planName}: the checks' limit (whole windows) ${minutes(oneHour)} min; with the windows sliding, no client ends sooner than ${floor(1)} with a lookup a job, ${floor(0)} with none; this batch ${minutes(timeline.endedAt - start)} min`,
);
