/* eslint-disable no-console, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- a measurement run by hand, never shipped */
/**
 * `npm run soak`: the scheduled pipeline template (examples/scheduled-pipeline-from-data-table.json)
 * left to run for days, as a marketing team runs it: real n8n in queue mode (PostgreSQL, Redis, a
 * main process, two workers, two webhook processes behind a balancer), a plan's key, rows fed
 * evenly all day, and on the way every n8n process restarted twice, Redis restarted, an upgrade
 * from an earlier n8n on the same database, and a service that loses some callbacks and answers
 * some requests 503. Time runs sped up: the sandbox's clock, which the node keeps, and the schedule
 * and the feed with it (n8n's own clock, and so the template's day, stays real).
 *
 * Writes bench/results/soak.json, soak.md and soak.svg: rows done, failed, made twice, left taken;
 * requests a job; the wall against the least the feed and the plan allow; each process's memory and
 * the database's size each simulated hour, and their growth per 1,000 rows.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MAX_DURATION_SECONDS } from '../core/types';
import { ensureN8n } from '../test/e2e/cache';
import { credentialOnOwnKey } from '../test/e2e/context';
import { createPipelineTables, insertRows } from '../test/e2e/dataTables';
import { packPackage } from '../test/e2e/environment';
import { templateWorkflow } from '../test/e2e/pipeline';
import { shutdown, stopAllOnExit } from '../test/e2e/processes';
import { jobsTagged, keyLabel } from '../test/e2e/scaledFigures';
import { startScaledLayout } from '../test/e2e/scaledLayout';
import { pruningEnv, soakOptions } from './soak/options';
import { rowOfPrompt, rowsDue, soakRow } from './soak/feed';
import { memoryByRole, toMiB, type Sample } from './soak/samples';
import { soakReport, soakChart, soakMarkdown, type SoakEvent } from './soak/report';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** How often (real ms) the run feeds rows and looks at the clock. */
const LOOP_MS = 2_000;
/** After the last row is fed, how long (simulated) the rows may take to end before the run stops. */
const DRAIN_MS = 6 * HOUR_MS;
/** Inserted per request, so that a day's rows do not go in one body. */
const INSERT_CHUNK = 200;

/** Pipeline Settings: no budget to speak of (see below), and the template's retries as shipped. */
const SETTINGS = { dailyCreditBudget: 1e9, retries: 2 };

/**
 * The disruptions, as shares of the feed's span: each n8n process restarted, Redis restarted, the
 * upgrade, a restart again. All in the first half, so that the second shows growth without one.
 */
const DISRUPTIONS: Array<{ at: number; what: SoakEvent['what'] }> = [
	{ at: 0.2, what: 'restart' },
	{ at: 0.28, what: 'redis restart' },
	{ at: 0.36, what: 'upgrade' },
	{ at: 0.5, what: 'restart' },
];

async function main(): Promise<void> {
	stopAllOnExit();
	const options = soakOptions(process.argv.slice(2));
	const upgrades = options.from !== options.to;
	console.log(`Soak: ${options.days} simulated days at ${options.speed}×, ${options.rowsPerDay} rows a day on a ${options.plan} key, n8n ${options.from}${upgrades ? ` then ${options.to}` : ''} in queue mode; ${options.lostCallbacks * 100}% of callbacks lost, ${options.unavailable * 100}% of requests answered 503`);
	// Installed before the clock starts: an install is not part of what is measured.
	for (const version of new Set([options.from, options.to])) await ensureN8n(version);
	const tarball = await packPackage();
	const layout = await startScaledLayout(options.from, tarball, {
		sandboxSpeed: options.speed,
		sandboxOptions: { clientClock: 'sandbox', faultRates: { lostCallbacks: options.lostCallbacks, unavailable: options.unavailable, seed: 1 } },
		n8nEnv: pruningEnv(options),
		persistentRedis: true,
	});
	try {
		const { context } = layout;
		const { sandbox } = context;
		const tag = `soak ${Date.now().toString(36)}`;
		const credential = await credentialOnOwnKey(context, 'soak', { speed: options.speed, signed: true, plan: options.plan });
		const tables = await createPipelineTables(context.n8n, `soak ${tag}`);
		const tickSeconds = (options.tickMinutes * 60) / options.speed;
		// No budget to speak of: n8n's day is real time here, so the soak does not see a day turn (the end-to-end check does).
		const workflow = await templateWorkflow(tables.ids, credential, tag, { tickSeconds, settings: SETTINGS });
		const workflowId = await context.n8n.createWorkflow(workflow);
		await context.n8n.activate(workflowId);

		const feedMs = options.days * DAY_MS;
		const total = rowsDue(feedMs, options);
		// Credits for every row fed, each tried as often as the template may, at the dearest size: the
		// soak measures the pipeline, not an account running dry (the sandbox's accounts start with 100,000 credits, half a day of this feed).
		const triesAtMost = SETTINGS.retries + 1;
		sandbox.accounts.accounts.get(`acct_${options.plan}`)!.balance = total * triesAtMost * MAX_DURATION_SECONDS * Math.max(...Object.values(sandbox.config.prices));

		const startedSim = sandbox.clock.now();
		const simMs = () => sandbox.clock.now() - startedSim;
		const insertedAt: number[] = [];
		const samples: Sample[] = [];
		const events: SoakEvent[] = [];
		const pending = [...DISRUPTIONS].filter((event) => event.what !== 'upgrade' || upgrades);
		const rowTable = `data_table_user_${tables.prompts.id}`;
		const key = keyLabel('soak');
		let restarts = 0;

		const sample = async (hour: number) => {
			const statuses = await layout.sql(`SELECT coalesce(status, ''), count(*) FROM "${rowTable}" GROUP BY 1`);
			const rows = Object.fromEntries(statuses.trim().split('\n').filter(Boolean).map((line) => [line.split('|')[0] || 'none', Number(line.split('|')[1])]));
			const requests = sandbox.journal.filter((entry) => entry.key === key && entry.path.startsWith('/api/')).length;
			const jobs = jobsTagged(sandbox, tag).length;
			const entry: Sample = { hour, memoryMiB: await memoryByRole(layout.processes()), databaseMiB: toMiB(await layout.databaseBytes()), rows, requests, jobs };
			samples.push(entry);
			console.log(`  hour ${hour}: ${JSON.stringify(entry.rows)}; ${entry.jobs} jobs, ${entry.requests} requests; database ${entry.databaseMiB} MiB; memory ${Object.entries(entry.memoryMiB).map(([role, mib]) => `${role} ${mib}`).join(', ')} MiB`);
		};

		const disrupt = async (what: SoakEvent['what']) => {
			const from = Date.now();
			if (what === 'restart') await layout.restart(`r${++restarts}`);
			else if (what === 'redis restart') await layout.restartRedis();
			else await layout.upgrade(options.to, 'upgraded');
			const event = { what, hour: simMs() / HOUR_MS, realSeconds: Math.round((Date.now() - from) / 1000), version: context.n8n.version };
			events.push(event);
			console.log(`  ${what} at hour ${event.hour.toFixed(1)}: ${event.realSeconds} s (n8n ${event.version})`);
		};

		const feed = async () => {
			const due = rowsDue(simMs(), options);
			while (insertedAt.length < due) {
				const from = insertedAt.length + 1;
				const count = Math.min(INSERT_CHUNK, due - insertedAt.length);
				await insertRows(context.n8n, tables.prompts, Array.from({ length: count }, (_, i) => soakRow(tag, from + i)));
				for (let i = 0; i < count; i++) insertedAt.push(simMs());
			}
		};

		let nextHour = 0;
		while (true) {
			const now = simMs();
			if (now >= nextHour * HOUR_MS) await sample(nextHour++);
			const disruption = pending[0];
			if (disruption && now >= disruption.at * feedMs) {
				pending.shift();
				await disrupt(disruption.what);
			}
			// main is down for a moment in a restart: the rows due go in on the next turn.
			await feed().catch((error: unknown) => console.log(`  feeding waits: ${(error as Error).message.slice(0, 120)}`));
			if (insertedAt.length >= total && pending.length === 0 && now > feedMs) {
				const open = Number((await layout.sql(`SELECT count(*) FROM "${rowTable}" WHERE status IN ('pending', 'taken')`)).trim());
				if (open === 0) break;
				if (now > feedMs + DRAIN_MS) {
					console.log('  rows still open at the end of the drain: see the report');
					break;
				}
			}
			await new Promise((resolve) => setTimeout(resolve, LOOP_MS));
		}
		await sample(Math.ceil(simMs() / HOUR_MS));
		await context.n8n.deactivate(workflowId);

		// The error's first words tell a held row from one whose answer was lost (soakReport).
		const unknownLines = await layout.sql(`SELECT prompt, left(error, 60) FROM "${rowTable}" WHERE status = 'unknown'`);
		const unknownRows = unknownLines.split('\n').filter(Boolean).map((line) => {
			const [prompt, error] = line.split('|');
			return { row: rowOfPrompt(tag, prompt) ?? 0, error: error ?? '' };
		});
		const report = soakReport({ options, tag, sandbox, key, insertedAt, samples, events, startedSim, unknownRows });
		await mkdir(options.out, { recursive: true });
		await writeFile(join(options.out, 'soak.json'), `${JSON.stringify({ options, report, events, samples }, null, 2)}\n`);
		await writeFile(join(options.out, 'soak.md'), soakMarkdown(options, report, events));
		await writeFile(join(options.out, 'soak.svg'), soakChart(samples, events, options));
		console.log(soakMarkdown(options, report, events));
	} finally {
		await layout.stop();
	}
}

main()
	.then(() => shutdown())
	.catch(async (error: unknown) => {
		console.error(error instanceof Error ? error.stack : error);
		await shutdown();
		process.exit(1);
	});
