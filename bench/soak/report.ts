/**
 * The soak's figures from the sandbox's jobs and journal and the hourly samples, as JSON, a
 * Markdown table and a chart (memory by process and the database's size, hour by hour).
 */
import type { Sandbox } from '../../sandbox';
import { jobsTagged } from '../../test/e2e/scaledFigures';
import { PLANS } from '../../core/types';
import { HELD_CREATE_ERROR } from '../../nodes/OmniVideo/actions/video/callbackRows';
import { percentile, physicalLimit } from '../measure';
import { failureOf, rowOfPrompt } from './feed';
import type { SoakOptions } from './options';
import type { Sample } from './samples';

export interface SoakEvent {
	what: 'restart' | 'redis restart' | 'upgrade';
	/** Simulated hours since the run began. */
	hour: number;
	/** How long (real) n8n or Redis took to be back. */
	realSeconds: number;
	/** n8n's version after it. */
	version: string;
}

export interface SoakReport {
	rows: number;
	done: number;
	/** Rows failed for good, and of them those the feed meant to fail (one in 100). */
	failed: number;
	failedAsMeant: number;
	/** Rows with a second job made while an earlier one had not failed: 0 is the promise. */
	madeTwice: number;
	/** Rows left `taken` (or `pending`) at the end: 0 is the promise. */
	leftTaken: number;
	leftPending: number;
	/** Rows whose job outlived the batch's Limit Wait Time: `running`, each told to the owner, its job ID kept. */
	leftRunning: number;
	/** Rows whose create's answer was lost (a 503, say): not sent again, so as not to pay twice; the owner looks. */
	leftUnknown: number;
	/**
	 * The unknown rows by why: `held`, a step that found its batch's notes gone held the row's create
	 * (createHold.ts), and no step read them within the hold; `answerLost`, its create was sent and no
	 * answer came back. `withJob`: of all unknown rows, those the service made a job for.
	 */
	unknown: { held: number; answerLost: number; withJob: number };
	jobs: number;
	requests: number;
	requestsPerJob: number;
	/** 503s the service answered, callbacks it lost, of this run. */
	unavailable: number;
	lostCallbacks: number;
	/** The jobs' callbacks by how each ended: delivered, lost, or still retried by the service (n8n answered 409 while the batch's execution ran, say, and the node looked the job up). */
	callbacks: Record<string, number>;
	/** Every answer n8n gave the callbacks' attempts, by status. */
	callbackAnswers: Record<string, number>;
	/** From the first row fed to the last video ready, against the least the feed and the plan allow. */
	wallHours: number;
	leastHours: number;
	wallOverLeast: number;
	/** Row fed → its video ready, simulated minutes. */
	readyMinutes: { p50: number; p95: number; max: number };
	/** Resident memory growth a 1,000 rows, MiB, by process, from SETTLE_HOURS after the last disruption to the end of the feed. */
	memoryMiBPer1000Rows: Record<string, number>;
	/** The database's growth a 1,000 rows, MiB, once pruning holds (after its age) to the end of the feed. */
	databaseMiBPer1000Rows: number;
}

/** Least squares slope of y over x; 0 with fewer than two points. */
function slope(points: Array<[number, number]>): number {
	if (points.length < 2) return 0;
	const mx = points.reduce((sum, [x]) => sum + x, 0) / points.length;
	const my = points.reduce((sum, [, y]) => sum + y, 0) / points.length;
	const sxx = points.reduce((sum, [x]) => sum + (x - mx) ** 2, 0);
	return sxx === 0 ? 0 : points.reduce((sum, [x, y]) => sum + (x - mx) * (y - my), 0) / sxx;
}

/** After a disruption, how long (simulated) the processes take to fill their caches and pools before growth counts. */
const SETTLE_HOURS = 6;

const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

/** How each job's callback ended (its last attempt), and n8n's answers to every attempt. */
function callbackFigures(attempts: Sandbox['callbackAttempts']): Pick<SoakReport, 'callbacks' | 'callbackAnswers'> {
	const count = (keys: string[]) => keys.reduce<Record<string, number>>((counts, key) => ({ ...counts, [key]: (counts[key] ?? 0) + 1 }), {});
	const last = new Map(attempts.map((attempt) => [attempt.jobId, attempt.outcome]));
	return { callbacks: count([...last.values()]), callbackAnswers: count(attempts.filter((attempt) => attempt.outcome !== 'lost').map((attempt) => String(attempt.status ?? attempt.error ?? 'none'))) };
}

/** A row left `unknown`, as the pipeline's table holds it: its number and its error. */
export interface UnknownRow {
	row: number;
	error: string;
}

export function soakReport(input: { options: SoakOptions; tag: string; sandbox: Sandbox; key: string; insertedAt: number[]; samples: Sample[]; events: SoakEvent[]; startedSim: number; unknownRows: UnknownRow[] }): SoakReport {
	const { options, tag, sandbox, key, insertedAt, samples, events, startedSim, unknownRows } = input;
	const jobs = jobsTagged(sandbox, tag).sort((a, b) => a.createdAt - b.createdAt);
	const byRow = new Map<number, typeof jobs>();
	for (const job of jobs) {
		const n = rowOfPrompt(tag, job.body.prompt)!;
		byRow.set(n, [...(byRow.get(n) ?? []), job]);
	}
	const madeTwice = [...byRow.values()].filter((rowJobs) => rowJobs.slice(0, -1).some((job) => !job.failure)).length;
	const last = samples.at(-1)?.rows ?? {};
	const failedAsMeant = [...byRow.entries()].filter(([n, rowJobs]) => failureOf(n) && rowJobs.at(-1)?.failure).length;
	const entries = sandbox.journal.filter((entry) => entry.key === key && entry.path.startsWith('/api/'));
	const jobIds = new Set(jobs.map((job) => job.id));
	const ready = [...byRow.entries()].map(([n, rowJobs]) => (rowJobs.at(-1)!.endsAt - startedSim - insertedAt[n - 1]) / 60_000);
	const lastReady = Math.max(...jobs.map((job) => job.endsAt - startedSim));
	const lastRowJob = byRow.get(insertedAt.length)?.at(-1);
	const least = Math.max(insertedAt.at(-1)! + (lastRowJob ? lastRowJob.endsAt - lastRowJob.createdAt : 0), physicalLimit(jobs.map((job) => job.endsAt - job.createdAt), PLANS[options.plan]).limitMs);
	const wall = lastReady - insertedAt[0];
	// Memory: from the last disruption (the processes started anew) to the end of the feed, over rows fed.
	const lastDisruption = Math.max(0, ...events.map((event) => event.hour));
	const feedHours = options.days * 24;
	const steady = samples.filter((sample) => sample.hour > lastDisruption + SETTLE_HOURS && sample.hour <= feedHours);
	const roles = [...new Set(samples.flatMap((sample) => Object.keys(sample.memoryMiB)))].sort();
	const rowsAt = (sample: Sample) => Object.values(sample.rows).reduce((sum, count) => sum + count, 0);
	const memory = Object.fromEntries(roles.map((role) => [role, round(slope(steady.filter((sample) => role in sample.memoryMiB).map((sample) => [rowsAt(sample), sample.memoryMiB[role]])) * 1000)]));
	const held = unknownRows.filter((row) => row.error.startsWith(HELD_CREATE_ERROR)).length;
	const pruned = samples.filter((sample) => sample.hour > options.pruneHours + 1 && sample.hour <= feedHours);
	return {
		rows: insertedAt.length,
		done: last.done ?? 0,
		failed: last.failed ?? 0,
		failedAsMeant,
		madeTwice,
		leftTaken: last.taken ?? 0,
		leftPending: last.pending ?? 0,
		leftRunning: last.running ?? 0,
		leftUnknown: last.unknown ?? 0,
		unknown: { held, answerLost: unknownRows.length - held, withJob: unknownRows.filter((row) => byRow.has(row.row)).length },
		jobs: jobs.length,
		requests: entries.length,
		requestsPerJob: round(entries.length / Math.max(1, jobs.length)),
		unavailable: entries.filter((entry) => entry.status === 503).length,
		lostCallbacks: sandbox.callbackAttempts.filter((attempt) => attempt.outcome === 'lost' && jobIds.has(attempt.jobId)).length,
		...callbackFigures(sandbox.callbackAttempts.filter((attempt) => jobIds.has(attempt.jobId))),
		wallHours: round(wall / 3_600_000),
		leastHours: round(least / 3_600_000),
		wallOverLeast: round(wall / least, 3),
		readyMinutes: { p50: round(percentile(ready, 50), 1), p95: round(percentile(ready, 95), 1), max: round(Math.max(...ready), 1) },
		memoryMiBPer1000Rows: memory,
		databaseMiBPer1000Rows: round(slope(pruned.map((sample) => [rowsAt(sample), sample.databaseMiB])) * 1000),
	};
}

export function soakMarkdown(options: SoakOptions, report: SoakReport, events: SoakEvent[]): string {
	const lines = [
		`# Soak: the scheduled pipeline for ${options.days} simulated days`,
		'',
		`${options.rowsPerDay} rows a simulated day on a ${options.plan} key, a tick every ${options.tickMinutes} simulated minutes, the sandbox at ${options.speed}×; n8n ${options.from}${options.from !== options.to ? ` upgraded to ${options.to}` : ''} in queue mode (main, 2 workers, 2 webhook processes, PostgreSQL, Redis kept on disk); ${options.lostCallbacks * 100}% of callbacks lost, ${options.unavailable * 100}% of requests answered 503; executions pruned after ${options.pruneHours} simulated hours. \`npm run soak\` (bench/soak.ts).`,
		'',
		'| | |',
		'|---|---|',
		`| rows fed | ${report.rows} |`,
		`| done | ${report.done} |`,
		`| failed for good | ${report.failed} (${report.failedAsMeant} of them meant to fail) |`,
		`| made twice | ${report.madeTwice} |`,
		`| left taken, left pending at the end | ${report.leftTaken}, ${report.leftPending} |`,
		`| left running (the job outlived the batch's Limit Wait Time: its ID kept, told to the owner) | ${report.leftRunning} |`,
		`| left unknown (not sent again, for the owner to look up) | ${report.leftUnknown}: ${report.unknown.answerLost} whose create's answer was lost, ${report.unknown.held} held after their batch's notes were lost; ${report.unknown.withJob} of them have a job |`,
		`| jobs, requests | ${report.jobs}, ${report.requests}: ${report.requestsPerJob} a job (${report.unavailable} answered 503; ${report.lostCallbacks} callbacks lost) |`,
		`| callbacks, by how each job's ended; n8n's answers to every attempt | ${Object.entries(report.callbacks).map(([outcome, n]) => `${n} ${outcome}`).join(', ')}; ${Object.entries(report.callbackAnswers).map(([status, n]) => `${n} × ${status}`).join(', ')} |`,
		`| wall, against the least the feed and the plan allow | ${report.wallHours} h against ${report.leastHours} h: ${report.wallOverLeast}× |`,
		`| row fed → video ready (simulated) | ${report.readyMinutes.p50} min median, ${report.readyMinutes.p95} min p95, ${report.readyMinutes.max} min at most |`,
		`| memory growth a 1,000 rows, from ${SETTLE_HOURS} h after the last disruption | ${Object.entries(report.memoryMiBPer1000Rows).map(([role, mib]) => `${role} ${mib} MiB`).join(', ')} |`,
		`| database growth a 1,000 rows, once pruning holds | ${report.databaseMiBPer1000Rows} MiB |`,
		'',
		'| disruption | at (simulated hour) | back in (real) | n8n |',
		'|---|---|---|---|',
		...events.map((event) => `| ${event.what} | ${event.hour.toFixed(1)} | ${event.realSeconds} s | ${event.version} |`),
		'',
	];
	return `${lines.join('\n')}`;
}

const COLORS = ['#3b6fd8', '#e08a2c', '#2a9d8f', '#b5179e', '#6c757d', '#d62828'];

/** Two panels over the simulated hours: each process's memory, and the database's size; the disruptions marked. */
export function soakChart(samples: Sample[], events: SoakEvent[], options: SoakOptions): string {
	const width = 760;
	const panelHeight = 220;
	const left = 60;
	const right = 150;
	const hours = Math.max(1, ...samples.map((sample) => sample.hour));
	const x = (hour: number) => left + (hour / hours) * (width - left - right);
	const roles = [...new Set(samples.flatMap((sample) => Object.keys(sample.memoryMiB)))].sort();
	const panels = [
		{ title: 'Resident memory by process (MiB)', series: roles.map((role) => ({ name: role, points: samples.filter((sample) => role in sample.memoryMiB).map((sample) => [sample.hour, sample.memoryMiB[role]] as [number, number]) })) },
		{ title: 'Database size (MiB)', series: [{ name: 'PostgreSQL', points: samples.map((sample) => [sample.hour, sample.databaseMiB] as [number, number]) }] },
	];
	const parts: string[] = [];
	panels.forEach((panel, index) => {
		const top = 40 + index * (panelHeight + 50);
		const max = Math.max(1, ...panel.series.flatMap((series) => series.points.map(([, value]) => value))) * 1.1;
		const y = (value: number) => top + panelHeight - (value / max) * panelHeight;
		parts.push(`<text x="${left}" y="${top - 8}" font-size="13" font-weight="bold">${panel.title}</text>`);
		parts.push(`<line x1="${left}" y1="${top + panelHeight}" x2="${width - right}" y2="${top + panelHeight}" stroke="#999"/><line x1="${left}" y1="${top}" x2="${left}" y2="${top + panelHeight}" stroke="#999"/>`);
		for (const tick of [0, 0.5, 1]) parts.push(`<text x="${left - 6}" y="${y(max * tick) + 4}" font-size="10" text-anchor="end">${Math.round(max * tick)}</text>`);
		for (let day = 0; day <= hours / 24; day++) parts.push(`<text x="${x(day * 24)}" y="${top + panelHeight + 14}" font-size="10" text-anchor="middle">day ${day}</text>`);
		for (const event of events) parts.push(`<line x1="${x(event.hour)}" y1="${top}" x2="${x(event.hour)}" y2="${top + panelHeight}" stroke="#bbb" stroke-dasharray="3,3"/><text x="${x(event.hour) + 3}" y="${top + 10}" font-size="9" fill="#777">${event.what}</text>`);
		panel.series.forEach((series, i) => {
			const color = COLORS[i % COLORS.length];
			parts.push(`<polyline fill="none" stroke="${color}" stroke-width="1.5" points="${series.points.map(([hour, value]) => `${x(hour).toFixed(1)},${y(value).toFixed(1)}`).join(' ')}"/>`);
			parts.push(`<text x="${width - right + 8}" y="${top + 14 + i * 14}" font-size="11" fill="${color}">${series.name}</text>`);
		});
	});
	const height = 40 + panels.length * (panelHeight + 50);
	return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif"><rect width="100%" height="100%" fill="white"/><text x="${left}" y="20" font-size="14">Soak: ${options.rowsPerDay} rows a simulated day for ${options.days} days, ${options.plan}, ${options.speed}×</text>${parts.join('')}</svg>\n`;
}
