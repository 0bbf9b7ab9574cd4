/**
 * Wait for Callback in the scaled-out layout (issue 24): one execution of N items on one key (Pro
 * unless told) with a signing secret; its resume URL is the proxy's, so the callbacks are shared
 * out over the two webhook processes and the execution resumes on whichever worker is free.
 *
 * The node parks with a continuation (docs/n8n-internals.md): each callback resumes the execution
 * and the node runs again on a worker, so an execution resumes many times by design; what must
 * happen once is the items going downstream (the "After" step runs once, with every item).
 *
 * Targets: every item done, within 1.05× the plan's limit, 0 duplicate jobs, downstream once, at
 * most 1.2 requests a job (2.2 on the spec's strict reading, where callbacks come unsigned and
 * once and no create may be sent to find a job). As a gate (CI, on a machine as loaded as it
 * happens to be) the figures are held to what only a fault would pass: 1.25× the limit and 1.5
 * requests a job (2.5 strict); the targets are measured by hand (`npm run test:e2e:scale`). n8n's
 * steps take real time, which the sandbox's speed multiplies: on a loaded machine more jobs go
 * past their expected end before their callback is taken, and each is looked up.
 */
import { PLANS, type PlanName } from '../../core/types';
import { rendersInCreationOrder, slidingWindowFloorMs } from '../../bench/slidingFloor';
import { typicalRenderSeconds } from '../../sandbox/renderTimes';
import { check, createActiveWorkflow, credentialOnOwnKey, errorOf, executionWith, outputOf, postRows, seconds, type Context } from './context';
import type { Execution } from './n8nServer';
import { linesAbout, perProcess, startsOf } from './queueLogs';
import { describeFigures, expectedLimitMs, jobsEnded, jobsTagged, keyLabel, realTimeOf, requestFigures } from './scaledFigures';
import type { ScaledLayout } from './scaledLayout';
import { noOp, omniVideo, webhookWorkflow } from './workflows';
import { withOwnSandbox } from './ownSandbox';
import { writeTimeline } from './timeline';

export interface ScaledWaitOptions {
	/** The check's name, also its key's label. */
	name: string;
	rows: number;
	/** The sandbox's speed during the check. */
	speed: number;
	/** The strict reading (a sandbox under `--service spec`): at most 2.2 requests a job (not 1.2). */
	strict: boolean;
	/** The key's plan (Pro unless given): its limits, and the limit the wall is held to. */
	plan?: PlanName;
	/** Held to a gate's bounds, not the targets (see above). */
	gate?: boolean;
}

/** The bounds a run is held to: the targets when measured, wider ones as a gate. */
function bounds(options: ScaledWaitOptions): { perJob: number; wall: number } {
	const perJob = options.strict ? 2.2 : 1.2;
	return options.gate ? { perJob: perJob + 0.3, wall: 1.25 } : { perJob, wall: 1.05 };
}

/** On a sandbox of the check's own, whose clock the node keeps (ownSandbox.ts). */
export async function scaledWaitForCallback(layout: ScaledLayout, options: ScaledWaitOptions): Promise<string> {
	return await withOwnSandbox(options, (sandbox) => run(layout, { ...layout.context, sandbox }, options));
}

async function run(layout: ScaledLayout, context: Context, options: ScaledWaitOptions): Promise<string> {
	const { sandbox } = context;
	const { rows, speed } = options;
	const plan = options.plan ?? 'pro';
	const stamp = Date.now().toString(36);
	const tag = `${options.name} ${stamp} item`;
	// On the spec's reading callbacks come unsigned: a secret would refuse every one of them.
	const signed = sandbox.service.switches.callbackSigning !== 'unsigned';
	const credential = await credentialOnOwnKey(context, options.name, { speed, signed, plan });
	const path = `e2e-${options.name}-${stamp}`;
	const typicalSeconds = typicalRenderSeconds('720P', 4);
	const workflowId = await createActiveWorkflow(
		context,
		webhookWorkflow(`e2e: ${options.name}`, path, [
			// On the sandbox's clock: its usual estimates, and Limit Wait Time in its minutes (the batch takes hours of them).
			omniVideo('Generate Video', { resource: 'video', operation: 'generate', prompt: '={{ $json.prompt }}', resolution: '720P', duration: 4, waitMode: 'callback', callbackTimeoutMinutes: 24 * 60 }, credential),
			noOp('After'),
		]),
	);
	await jobsEnded(sandbox);
	const from = sandbox.journal.length;
	const attemptsFrom = sandbox.callbackAttempts.length;
	const proxyFrom = layout.proxy.log.length;
	const started = Date.now();
	await postRows(context, path, Array.from({ length: rows }, (_, i) => ({ prompt: `${tag} ${i + 1}` })));
	// The batch's least time from typical renders; past 1.5× of it (and a minute for n8n itself) the
	// target is missed anyway: the figures are taken then, and the check says where the batch stood.
	// On the strict reading every job costs a lookup too: where the hour binds (500 items), the
	// creates and their lookups take up to two of its windows, which the least time does not count.
	const patienceMs = 1.5 * expectedLimitMs(rows, typicalSeconds * 1000, speed, plan) * (options.strict ? 2 : 1) + 60_000;
	const parked = await executionWith(context, workflowId, ['waiting', 'success', 'error', 'crashed'], 300_000);
	const finished: Execution | undefined = await executionWith(context, workflowId, ['success', 'error', 'crashed'], Math.max(0, started + patienceMs - Date.now())).catch(() => undefined);
	const waitedMs = Date.now() - started;

	const figures = requestFigures(sandbox, { tag, key: keyLabel(options.name), from, rows, speed, plan });
	const jobs = jobsTagged(sandbox, tag);
	const jobIds = new Set(jobs.map((job) => job.id));
	const attempts = sandbox.callbackAttempts.slice(attemptsFrom).filter((attempt) => jobIds.has(attempt.jobId));
	const callbacks = layout.proxy.log.slice(proxyFrom).filter((entry) => entry.path.startsWith(`/webhook-waiting/${parked.id}`));
	const byProcess: Record<string, number> = {};
	for (const entry of callbacks) byProcess[`${entry.backend} ${entry.status}`] = (byProcess[`${entry.backend} ${entry.status}`] ?? 0) + 1;
	const starts = await startsOf(layout.userFolder, parked.id, layout.workers);
	const resumed = Object.values(starts).reduce((sum, count) => sum + count, 0) - 1;
	const refusedResumes = await linesAbout(layout.userFolder, parked.id, layout.webhooks, /already being resumed|another process/i);
	const items = finished ? outputOf(finished, 'Generate Video') : [];
	const nodeRuns = finished?.data?.resultData.runData['Generate Video']?.length ?? 0;
	const downstream = finished?.data?.resultData.runData.After ?? [];
	const downstreamItems = downstream.reduce((sum, run) => sum + (run.data?.main[0]?.length ?? 0), 0);
	const done = items.filter((item) => item.json.status === 'done').length;
	const firstCreate = jobs.length ? realTimeOf(sandbox, Math.min(...jobs.map((job) => job.createdAt))) : started;
	const wallMs = finished ? Date.parse(finished.stoppedAt ?? '') - firstCreate : undefined;
	const ratio = wallMs !== undefined && figures.limitMs > 0 ? wallMs / figures.limitMs : undefined;
	// The least time with the windows sliding as the sandbox keeps them, a lookup a job where callbacks come unsigned.
	const floorMs = slidingWindowFloorMs(rendersInCreationOrder(jobs), PLANS[plan], signed ? 0 : 1) / speed;
	const floor = wallMs !== undefined && floorMs > 0 ? ` (no client ends before ${seconds(floorMs)} with the windows sliding: ${(wallMs / floorMs).toFixed(2)}× that)` : '';
	const wall = wallMs !== undefined && ratio !== undefined ? `, ${seconds(wallMs)} from the first create to the end = ${ratio.toFixed(2)}× the plan's limit (${seconds(figures.limitMs)})${floor}` : '';
	const ended = finished ? `execution ${finished.id} ${finished.status}, ${done} of ${rows} items done${wall}` : `execution ${parked.id} still ${parked.status === 'waiting' ? 'waiting' : parked.status} after ${seconds(waitedMs)} (past the batch's typical limit): ${jobs.length} jobs made`;
	const evidence = `${rows} items, ${plan} key, sandbox profile ${sandbox.service.profile}, ${signed ? 'signing secret' : 'unsigned callbacks'}, ×${speed}: ${ended}; ${describeFigures(figures, rows)}; "After" ran ${downstream.length} time(s) with ${downstreamItems} items; resumed ${resumed} time(s), ${nodeRuns} runs of the node (started by ${perProcess(starts)}; resumes refused by ${perProcess(refusedResumes)}); ${attempts.length} deliveries, callbacks taken by ${perProcess(byProcess)}`;

	await writeTimeline(options.name, { sandbox, from, attempts, callbacks, jobs });
	const bound = bounds(options);
	check(finished, `the batch did not end: ${evidence}`);
	check(finished.status === 'success', `execution ${finished.status}: ${errorOf(finished, 'Generate Video')?.message}; ${evidence}`);
	check(items.length === rows && done === rows, `items not done: ${evidence}`);
	check(figures.duplicates === 0, `duplicate jobs: ${evidence}`);
	check(downstream.length === 1 && downstreamItems === rows, `the items went downstream ${downstream.length} times (${downstreamItems} items): ${evidence}`);
	// On either reading: the default sandbox would replay such a create, but nothing counts on it.
	check(figures.createsResent === 0, `creates sent to find a job: ${evidence}`);
	check(figures.perJob <= bound.perJob, `more than ${bound.perJob} requests a job: ${evidence}`);
	check(ratio !== undefined && ratio <= bound.wall, `slower than ${bound.wall}× the plan's limit: ${evidence}`);
	return evidence;
}
