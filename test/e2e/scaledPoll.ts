/**
 * Poll over workers (issue 24, item 4): 3 executions × 15 rows at once on one Pro key, shared out
 * by n8n over the two workers, against the same 45 rows polled by one process (one execution:
 * n8n runs an execution on one worker). Each worker's limiter sees only its own jobs; the target
 * is that this costs nothing: within 3 % of one process in wall time (as a share of the plan's
 * limit for each run's own jobs, whose render times differ) and in requests a job, and no 429
 * reaching an item.
 *
 * On a sandbox of the check's own at 4×, whose clock the node keeps (ownSandbox.ts). Each run has
 * a key of its own on the Pro account, so that neither waits on the rate windows the other spent.
 */
import { check, createActiveWorkflow, credentialOnOwnKey, executionsOf, outputOf, postRows, seconds, type Context } from './context';
import type { Execution } from './n8nServer';
import { waitUntil } from './processes';
import { workerThatStarted } from './queueLogs';
import { describeFigures, jobsEnded, keyLabel, requestFigures, type RequestFigures } from './scaledFigures';
import type { ScaledLayout } from './scaledLayout';
import { omniVideo, webhookWorkflow } from './workflows';
import { withOwnSandbox } from './ownSandbox';

const SPEED = 4;

interface PollRun {
	figures: RequestFigures;
	wallMs: number;
	ratio: number;
	done: number;
	surfaced429: number;
	line: string;
}

export async function scaledPoll(layout: ScaledLayout, options: { name: string; strict: boolean }): Promise<string> {
	return await withOwnSandbox({ speed: SPEED, strict: options.strict }, (sandbox) => compare(layout, { ...layout.context, sandbox }, options.name));
}

/** The same 45 rows over the workers and in one process, on one sandbox. */
async function compare(layout: ScaledLayout, context: Context, name: string): Promise<string> {
	const one = await pollRun(layout, context, `${name}-one`, [45]);
	const spread = await pollRun(layout, context, `${name}-spread`, [15, 15, 15]);
	const wallOver = spread.ratio / one.ratio;
	const requestsOver = spread.figures.perJob / one.figures.perJob;
	const evidence = `sandbox profile ${context.sandbox.service.profile}, ×${SPEED}: over 2 workers ${spread.line}; one process ${one.line}; over workers ÷ one process: ${wallOver.toFixed(3)} in wall (as a share of each run's limit), ${requestsOver.toFixed(3)} in requests a job`;
	check(one.done === 45 && spread.done === 45, `rows not done: ${evidence}`);
	check(one.surfaced429 === 0 && spread.surfaced429 === 0, `a 429 reached an item: ${evidence}`);
	check(spread.figures.duplicates === 0 && one.figures.duplicates === 0, `duplicate jobs: ${evidence}`);
	check(wallOver <= 1.03, `over workers more than 3 % slower than one process: ${evidence}`);
	check(requestsOver <= 1.03, `over workers more than 3 % more requests a job than one process: ${evidence}`);
	return evidence;
}

/** Posts one execution per entry of `executions` (its rows) at once; waits for all; measures. */
async function pollRun(layout: ScaledLayout, context: Context, name: string, executions: number[]): Promise<PollRun> {
	const { sandbox } = context;
	const stamp = Date.now().toString(36);
	const tag = `${name} ${stamp}`;
	const credential = await credentialOnOwnKey(context, name, { speed: SPEED, signed: true });
	const path = `e2e-${name}-${stamp}`;
	const workflowId = await createActiveWorkflow(
		context,
		webhookWorkflow(`e2e: ${name}`, path, [
			// On the sandbox's clock: its usual estimates, and the timeout in its minutes (the last of 45 rows waits for a place for several).
			omniVideo('Generate Video', { resource: 'video', operation: 'generate', prompt: '={{ $json.prompt }}', resolution: '720P', duration: 4, waitMode: 'poll', timeoutMinutes: 60 }, credential),
		]),
	);
	await jobsEnded(sandbox);
	const rows = executions.reduce((sum, count) => sum + count, 0);
	const from = sandbox.journal.length;
	const started = Date.now();
	await Promise.all(executions.map((count, run) => postRows(context, path, Array.from({ length: count }, (_, i) => ({ prompt: `${tag} execution ${run + 1} row ${i + 1}` })))));
	let finished: Execution[] = [];
	await waitUntil(`${executions.length} finished executions`, async () => {
		finished = (await executionsOf(context, workflowId)).filter((execution) => ['success', 'error', 'crashed'].includes(execution.status));
		return finished.length >= executions.length;
	}, 600_000, 500);
	const full = await Promise.all(finished.map((execution) => context.n8n.execution(execution.id)));
	const wallMs = Math.max(...full.map((execution) => Date.parse(execution.stoppedAt ?? ''))) - started;
	const items = full.flatMap((execution) => outputOf(execution, 'Generate Video'));
	const done = items.filter((item) => item.json.status === 'done').length;
	const surfaced429 = items.filter((item) => /429|rate limit|too many/i.test(String(item.json.error ?? ''))).length;
	const figures = requestFigures(sandbox, { tag, key: keyLabel(name), from, rows, speed: SPEED });
	const ratio = wallMs / figures.limitMs;
	const workers = await Promise.all(full.map((execution) => workerThatStarted(layout.userFolder, execution.id, layout.workers)));
	const line = `${executions.join('+')} rows on ${[...new Set(workers)].join(', ')}: ${full.map((execution) => execution.status).join(', ')}, ${done} done, ${surfaced429} 429s surfaced; ${seconds(wallMs)} = ${ratio.toFixed(2)}× the plan's limit (${seconds(figures.limitMs)}); ${describeFigures(figures, rows)}`;
	return { figures, wallMs, ratio, done, surfaced429, line };
}
