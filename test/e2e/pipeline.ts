/* eslint-disable @n8n/community-nodes/no-restricted-imports -- end-to-end tooling, never shipped */
/**
 * The scheduled pipeline template (examples/scheduled-pipeline-from-data-table.json) as users run
 * it (issue 51): a Data Table of prompts, the Schedule Trigger ticking every few seconds, ticks
 * that start while an earlier tick's batch is parked, rows added meanwhile, and n8n restarted
 * while the first batch is parked. Each row must be made once (the sandbox's jobs), end done with
 * its own video or failed with the service's reason, and never be taken again.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { typicalRenderSeconds } from '../../sandbox/renderTimes';
import { check, credentialOnOwnKey, executionWith, outputOf, seconds, sleep, type Context } from './context';
import { createDataTable, insertRows, rowsOf, withDataTable, type Row } from './dataTables';
import { EXAMPLES_DIR } from './instance';
import { describeFigures, jobsEnded, jobsTagged, keyLabel, requestFigures } from './scaledFigures';
import { waitUntil } from './processes';
import type { Execution } from './n8nServer';
import type { Credential, WorkflowJson } from './workflows';

export const PIPELINE_TEMPLATE = 'scheduled-pipeline-from-data-table.json';
/** The schedule's tick in the check: short, so that several ticks fall while the first batch is parked. */
const TICK_SECONDS = 5;
/**
 * The first batch's size: the longest render (90 s, 9 s at ×10), so that it stays parked well past
 * the next tick; at 720P and 4 s its 4 renders could all end within one tick (CI met it).
 */
const FIRST_BATCH = { resolution: '4K', duration: 10 } as const;
/** The rows added while the first batch is parked: the shortest size. */
const LATER_ROWS = { resolution: '720P', duration: 4 } as const;
/** Past this after the restart, the rows are stuck: n8n's wait tracker looks every 60 s. */
const PATIENCE_MS = 420_000;

/** The template as shipped, pointed at `tableId`, with `credential`, ticking every TICK_SECONDS. */
export async function pipelineWorkflow(context: Context, tableId: string, credential: Credential, name: string): Promise<WorkflowJson> {
	const workflow = withDataTable(JSON.parse(await readFile(join(EXAMPLES_DIR, PIPELINE_TEMPLATE), 'utf8')) as WorkflowJson, tableId);
	for (const node of workflow.nodes) {
		if (node.type === 'n8n-nodes-base.scheduleTrigger') node.parameters.rule = { interval: [{ field: 'seconds', secondsInterval: TICK_SECONDS }] };
		if (node.credentials?.omniVideoApi) {
			node.credentials.omniVideoApi = credential;
			// The sped-up sandbox's render time, as a user tells the node their account's (see scenarios.ts):
			// the first batch's, the longest, so that no row is looked up before its callback is due.
			const options = node.parameters.options as Record<string, unknown>;
			options.expectedRenderSeconds = Math.ceil(typicalRenderSeconds(FIRST_BATCH.resolution, FIRST_BATCH.duration) / context.speed);
		}
	}
	return { ...workflow, name: `e2e: ${name}` };
}

/** What one tick did: the rows it took (ids), and what became of its items. */
interface Tick {
	id: string;
	status: string;
	startedAt: number;
	stoppedAt: number;
	taken: number[];
	recorded: number[];
}

function tickOf(execution: Execution): Tick {
	const ids = (node: string) => outputOf(execution, node).map((item) => Number(item.json.id));
	return { id: execution.id, status: execution.status, startedAt: Date.parse(execution.startedAt), stoppedAt: Date.parse(execution.stoppedAt ?? '') || Infinity, taken: ids('Mark Taken'), recorded: ids('Record Outcome') };
}

const sampleRows = (tag: string, from: number, count: number, size: { resolution: string; duration: number }, refused?: number): Row[] =>
	Array.from({ length: count }, (_, i) => ({
		prompt: `${tag} row ${from + i}: ${i + from === refused ? 'a forbidden scene [sandbox:job-fails-content-policy]' : 'a paper boat on a rainy street'}`,
		...size,
		status: 'pending',
	}));

/**
 * `restart`: stops every n8n process and starts them again (one process, or queue mode's main,
 * workers and webhook processes), as a deploy does.
 */
export async function pipelineEachRowOnce(context: Context, name: string, restart: () => Promise<void>): Promise<string> {
	const { sandbox, n8n } = context;
	const unsigned = sandbox.service.switches.callbackSigning === 'unsigned';
	const credential = await credentialOnOwnKey(context, name, { speed: context.speed, signed: !unsigned });
	const stamp = Date.now().toString(36);
	const tag = `${name} ${stamp}`;
	const table = await createDataTable(n8n, `e2e ${name} ${stamp}`);
	// Four rows at first (the third against the content policy), two more while the first batch is parked.
	await insertRows(n8n, table, sampleRows(tag, 1, 4, FIRST_BATCH, 3));
	await jobsEnded(sandbox);
	const from = sandbox.journal.length;
	const workflowId = await n8n.createWorkflow(await pipelineWorkflow(context, table.id, credential, name));
	await n8n.activate(workflowId);

	const first = await executionWith(context, workflowId, ['waiting'], 120_000);
	await insertRows(n8n, table, sampleRows(tag, 5, 2, LATER_ROWS));
	// The schedule's next tick starts while the first batch is parked, before the restart: a restart
	// right after the first parked could find its jobs ended after it and no tick between (CI met it).
	// The first batch waits for the last of 4 of the longest renders, the next tick comes within 5 s.
	// Seen so, with the first still waiting: what n8n's timestamps say afterwards may differ (a resumed
	// execution may be listed with another start time). The restart comes once no tick is mid-step:
	// n8n stopping under a running step ends it crashed, with the rows it took left taken, which is
	// not what this check is about (docs/n8n.md says what to do then).
	let seenDuringFirst: string[] = [];
	await waitUntil(
		'a tick started while the first batch is parked, and no tick mid-step',
		async () => {
			const listed = await n8n.executions(workflowId);
			const later = listed.filter((execution) => execution.id !== first.id && Date.parse(execution.startedAt) > Date.parse(first.startedAt));
			if (listed.find((execution) => execution.id === first.id)?.status !== 'waiting' || later.length === 0) return false;
			if (listed.some((execution) => execution.status === 'running' || execution.status === 'new')) return false;
			seenDuringFirst = later.map((execution) => execution.id);
			return true;
		},
		3 * TICK_SECONDS * 1000,
		500,
	);
	const downFrom = Date.now();
	await restart();
	const downMs = Date.now() - downFrom;
	let rows = await rowsOf(n8n, table);
	await waitUntil(
		'every row done or failed',
		async () => {
			rows = await rowsOf(n8n, table);
			return rows.length === 6 && rows.every((row) => row.status === 'done' || row.status === 'failed');
		},
		PATIENCE_MS,
		1_000,
	).catch(() => undefined);
	// Two more ticks after the last row ended: the failed row must not be taken again.
	await sleep(2 * TICK_SECONDS * 1000 + 1_000);
	await n8n.deactivate(workflowId);
	await sleep(1_000);
	rows = await rowsOf(n8n, table);

	const ticks = (await n8n.executions(workflowId)).map(tickOf).sort((a, b) => a.startedAt - b.startedAt);
	const tick1 = ticks.find((tick) => tick.id === first.id);
	const taking = ticks.filter((tick) => tick.taken.length > 0);
	// From the first tick's start as seen while it was parked: n8n may give a resumed execution a new
	// start time (CI saw one whose tick had started before the restart counted as after it).
	const firstStartedAt = Date.parse(first.startedAt);
	const duringFirst = tick1 ? ticks.filter((tick) => tick.id !== tick1.id && (seenDuringFirst.includes(tick.id) || (tick.startedAt > firstStartedAt && tick.startedAt < tick1.stoppedAt))) : [];
	const figures = requestFigures(sandbox, { tag, key: keyLabel(name), from, rows: 6, speed: context.speed });
	const jobs = jobsTagged(sandbox, tag);
	const done = rows.filter((row) => row.status === 'done');
	const failed = rows.filter((row) => row.status === 'failed');
	// Each row's own job: its URL and prompt are the row's (the items kept their rows across the resume).
	const ownJob = (row: Row) => jobs.find((job) => job.id === row.jobId);
	const linked = rows.filter((row) => {
		const job = ownJob(row);
		return job !== undefined && job.body.prompt === row.prompt && (row.status !== 'done' || (typeof row.videoUrl === 'string' && row.videoUrl.length > 0 && row.videoUrl === sandbox.jobs.resultUrl(job)));
	});
	const takenIds = taking.flatMap((tick) => tick.taken);
	// Jobs whose callback n8n could not take (n8n down for the restart, or refused): the node looks those up once overdue.
	const jobIds = new Set(jobs.map((job) => job.id));
	const missed = new Set(sandbox.callbackAttempts.filter((attempt) => jobIds.has(attempt.jobId) && !(attempt.status !== undefined && attempt.status < 300)).map((attempt) => attempt.jobId));
	const missedLookups = sandbox.journal
		.slice(from)
		.filter((entry) => entry.key === keyLabel(name) && entry.path.startsWith('/api/v1/jobs/') && missed.has(entry.path.slice('/api/v1/jobs/'.length))).length;
	const perJobBesides = (figures.requests - missedLookups) / 6;
	const describeTick = (tick: Tick) => `${tick.id} ${tick.status} took [${tick.taken.join(',')}] recorded [${tick.recorded.join(',')}]`;
	const evidence = `6 rows (sandbox profile ${sandbox.service.profile}, ${unsigned ? 'unsigned callbacks' : 'signing secret'}); ${ticks.length} ticks, ${taking.length} took rows: ${taking.map(describeTick).join('; ')}; ${duringFirst.length} started while tick ${first.id} was parked (it started ${first.startedAt}, listed at the end as ${tick1 ? new Date(tick1.startedAt).toISOString() : 'missing'}; ${duringFirst.map((tick) => `${tick.id} took [${tick.taken.join(',')}]`).join(', ')}); n8n restarted while it was parked, down ${seconds(downMs)}; ${jobs.length} jobs for 6 rows; ${done.length} done, ${failed.length} failed (${failed.map((row) => `row ${row.id}: ${String(row.error).slice(0, 80)}`).join('; ')}); ${linked.length} of 6 rows hold their own job (prompt and URL); ${describeFigures(figures, 6)}, of which ${missedLookups} lookups of the ${missed.size} jobs whose callback n8n could not take (down for the restart): ${perJobBesides.toFixed(2)} a job besides; rows taken ${takenIds.length} times`;

	check(tick1 && tick1.taken.length === 4, `the first tick did not take the 4 rows: ${evidence}`);
	check(duringFirst.length > 0 && duringFirst.every((tick) => tick.taken.every((id) => !tick1.taken.includes(id))), `no tick started while the first was parked, or one took its rows: ${evidence}`);
	check(takenIds.length === 6 && new Set(takenIds).size === 6, `rows taken more than once, or not at all: ${evidence}`);
	check(jobs.length === 6 && figures.duplicates === 0 && figures.createsResent === 0, `rows made more than once: ${evidence}`);
	check(done.length === 5 && failed.length === 1 && /content polic/i.test(String(failed[0].error)), `rows not ended as expected: ${evidence}`);
	check(linked.length === 6, `rows hold another row's job: ${evidence}`);
	check(taking.every((tick) => tick.status === 'success' && [...tick.recorded].sort().join() === [...tick.taken].sort().join()), `a tick did not record the rows it took: ${evidence}`);
	// The lookups of jobs whose callbacks came while n8n was down are the restart's price (on the strictest
	// reading such a callback never comes again); every other request counts against the bound.
	check(perJobBesides <= (unsigned ? 2.2 : 1.2), `too many requests a job: ${evidence}`);
	return evidence;
}
