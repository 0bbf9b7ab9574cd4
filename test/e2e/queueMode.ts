/**
 * The package on n8n in queue mode, scaled out as n8n's Helm chart lays it out (scaledLayout.ts):
 * PostgreSQL, Redis, a main process, two workers, and two webhook processes behind a round-robin
 * proxy that takes `/webhook/` and `/webhook-waiting/`. The checks of issue 24 run in it, on the
 * default sandbox and on the spec's strict reading (a second sandbox, `--service spec`).
 */
import { check } from './context';
import { workerThatStarted } from './queueLogs';
import { startScaledLayout } from './scaledLayout';
import { scaledPoll } from './scaledPoll';
import { scaledWaitForCallback } from './scaledWaitForCallback';
import { SCENARIOS, waitForCallback } from './scenarios';
import { pipelineEachRowOnce } from './pipeline';
import { QUEUED_STATIC_DATA, queuedExecutionsStaticData } from './queuedStaticData';

type RunCheck = (label: string, name: string, fn: () => Promise<string>) => Promise<void>;

/**
 * The sandbox's speed in the 50-item Wait for Callback checks. n8n's own steps take real time, which
 * the sandbox's clock multiplies: a callback that comes while a step runs is refused (409; lost on
 * the strict reading, looked up once overdue), and at 4× a step covers four times its real share of
 * the time between callbacks. 2× keeps each check under 4 minutes, and closer to what a user sees.
 * E2E_CALLBACK_SPEED (run.ts) sets another, by hand: 1 is what users run (about 8 minutes a check).
 */
const CALLBACK_SPEED = 2;
/**
 * 500 items in one execution: on a Pro key the plan's limit is 4 hours (200 requests an hour), 24
 * minutes at 10×; on a Premium key (500 an hour, 10 jobs at once) it is 1 hour, 6 minutes at 10×,
 * which CI can afford. The figures are the same kind: wall ÷ the plan's limit, requests a job.
 */
const LARGE_BATCH = { rows: 500, plan: 'premium' } as const;
/**
 * Its default speed; E2E_LARGE_SPEED (run.ts) sets another, by hand: 1 is what users run (an hour
 * and more). At 10×, n8n's wait tracker, which polls once a minute of real time, may wake a parked
 * batch ten of the sandbox's minutes late; at 1× that is one minute.
 */
const LARGE_BATCH_SPEED = 10;

/**
 * Measurements, not gates: the 50-item batch on the strictest reading (CI's strict-reading step
 * covers that reading on one process) and issue 24's targets (Poll over workers against one
 * process, 500 items in one execution), 28 minutes and more together. They run with `--scale` (`npm run
 * test:e2e:scale`, by hand, results in docs/benchmarks.md) or when E2E_ONLY names them, not in CI.
 */
const MEASUREMENTS = ['queue-wait-for-callback-50-items-spec', 'queue-poll-3x15-over-workers', 'queue-poll-3x15-over-workers-spec', 'queue-wait-for-callback-500-items'];
/**
 * On the strict reading every callback of 500 is confirmed by a lookup: 1,000 requests, two of
 * Premium's hours, 12 minutes or more at 10x: only when E2E_ONLY names it.
 */
const NAMED_ONLY = 'queue-wait-for-callback-500-items-spec';

/**
 * `named`: the checks E2E_ONLY names; `scale`: run the measurements too; `largeSpeed` and
 * `callbackSpeed`: the sandbox's speed in the 500-item and the 50-item checks.
 */
export async function runQueueMode(
	version: string,
	tarball: string,
	runCheck: RunCheck,
	{ named = [], scale = false, largeSpeed = LARGE_BATCH_SPEED, callbackSpeed = CALLBACK_SPEED }: { named?: readonly string[]; scale?: boolean; largeSpeed?: number; callbackSpeed?: number } = {},
): Promise<void> {
	const label = `[n8n ${version} queue mode, 2 webhook processes]`;
	const largeBatch = { ...LARGE_BATCH, speed: largeSpeed };
	const measure = (name: string, fn: () => Promise<string>) => ((scale && name !== NAMED_ONLY) || named.includes(name) ? runCheck(label, name, fn) : Promise.resolve());
	const layout = await startScaledLayout(version, tarball);
	try {
		const { context } = layout;
		// In CI a gate; measured against its targets with --scale.
		await runCheck(label, 'queue-wait-for-callback-50-items', () => scaledWaitForCallback(layout, { name: 'queue-wfc-50', rows: 50, speed: callbackSpeed, strict: false, gate: !scale }));
		await measure(MEASUREMENTS[0], () => scaledWaitForCallback(layout, { name: 'queue-wfc-50-spec', rows: 50, speed: callbackSpeed, strict: true }));
		await measure(MEASUREMENTS[1], () => scaledPoll(layout, { name: 'queue-poll', strict: false }));
		await measure(MEASUREMENTS[2], () => scaledPoll(layout, { name: 'queue-poll-spec', strict: true }));
		await measure(MEASUREMENTS[3], () => scaledWaitForCallback(layout, { name: 'queue-wfc-500', ...largeBatch, strict: false }));
		await measure(NAMED_ONLY, () => scaledWaitForCallback(layout, { name: 'queue-wfc-500-spec', ...largeBatch, strict: true }));
		// A host behaviour the node lives with (docs/n8n-internals.md), checked by hand when E2E_ONLY names it.
		if (named.includes(QUEUED_STATIC_DATA)) await runCheck(label, QUEUED_STATIC_DATA, () => queuedExecutionsStaticData(layout));
		await runCheck(label, 'queue-wait-for-callback-resumes-on-another-worker', async () => {
			let parkedOn = -1;
			let executionId = '';
			const evidence = await waitForCallback(context, 'queue-wait-for-callback', 1, 'signed', { onParked: async (id) => {
				executionId = id;
				const name = await workerThatStarted(layout.userFolder, id, layout.workers.slice(0, 2));
				check(name, `no worker log names execution ${id}`);
				parkedOn = layout.workers.indexOf(name);
				// The worker that parked it goes away: only the other one can resume it.
				await layout.stopWorker(parkedOn);
			} });
			const other = layout.workers[1 - parkedOn];
			const resumedBy = await workerThatStarted(layout.userFolder, executionId, [other]);
			await layout.restartWorker(parkedOn, `worker-${parkedOn + 1}-again`);
			check(resumedBy === other, `execution ${executionId} was not resumed by ${other}`);
			return `parked on worker-${parkedOn + 1} (then stopped), resumed on ${other}; ${evidence}`;
		});
		// issue 51: the pipeline template with every process restarted while its first batch is parked
		// (each worker and webhook process in a fresh folder of its own: scaledLayout.ts says why).
		await runCheck(label, 'queue-pipeline-each-row-once', () => pipelineEachRowOnce(context, 'queue-pipeline', () => layout.restart('after-pipeline')));
		// n8n 3.0 runs manual executions only on workers; the layout offloads them already.
		await runCheck(label, 'queue-manual-run-on-a-worker', async () => {
			const { manualRunFromEditor, textToVideoOnSandboxScale } = await import('./browser');
			const workflowId = await textToVideoOnSandboxScale(context);
			const evidence = await manualRunFromEditor(context, workflowId);
			const [latest] = await context.n8n.executions(workflowId);
			check(latest?.mode === 'manual', `the workflow's newest execution is not a manual one (${latest?.mode ?? 'none'})`);
			const worker = await workerThatStarted(layout.userFolder, latest.id, layout.workers);
			check(worker, `no worker's log names execution ${latest.id}: it ran on main`);
			return `${evidence}; execution ${latest.id} (manual) ran on ${worker}`;
		});
		for (const scenario of SCENARIOS.filter((entry) => ['trigger-once-per-real-callback', 'trigger-concurrent-duplicate-starts-once'].includes(entry.name))) {
			await runCheck(label, `queue-${scenario.name}`, () => scenario.run(context));
		}
	} finally {
		await layout.stop();
	}
}
