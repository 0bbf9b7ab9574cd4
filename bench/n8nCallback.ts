/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- benchmarks run by people, never shipped */
import { N8nTestInstance } from '../test/support/n8n/instance';
import { PACKAGE_DIR, workflowOf } from '../test/support/n8n/engine';
import { errorOf, itemsOf, omniVideoNode, outputOf } from '../test/support/n8n/workflows';
import { join } from 'node:path';
import { PLANS } from '../core/types';
import { startSandbox } from '../sandbox';
import { ROW_SIZE, rowPrompt, type BatchSetup, type StrategyOutcome } from './strategies';

/**
 * The sandbox's speed for (d): n8n's own steps take real time, which the sandbox's clock multiplies,
 * and a callback that comes while a step runs is refused (409) and comes again 5 s later. At ×50 a
 * step covers 50 times its real share of the time between callbacks; ×10 keeps (d) nearer to what
 * a user sees, for about 8 minutes more of the bench.
 */
export const N8N_SPEED = 10;

/**
 * (d): the n8n node's Wait for Callback through n8n's engine in process, one execution of
 * `rows` items. The node keeps the sandbox's clock (the sandbox is started with `clientClock:
 * 'sandbox'`, which the node reads: nodes/shared/hostClock.ts): its plan is the plan itself, its
 * estimates the usual ones; only n8n's own steps take real time. The workflow knows every job's
 * outcome when the execution resumes: that instant is each job's "known" time.
 */
export async function n8nWaitForCallback(setup: BatchSetup, signed: boolean, processes = 1): Promise<StrategyOutcome> {
	const { sandbox, speed } = setup;
	const n8n = await N8nTestInstance.start({
		omniVideoApi: {
			apiKey: setup.apiKey,
			baseUrl: sandbox.url,
			plan: 'custom',
			...setup.limits,
			webhookSecret: signed ? sandbox.webhookSecret : '',
		},
	});
	const outcome: StrategyOutcome = { known: new Map(), surfaced429: 0, failedRows: 0 };
	try {
		// Several webhook processes behind a round-robin balancer: each a load of the package with
		// memory of its own (its modules loaded afresh), taking the execution's callbacks in turn.
		for (let added = 1; added < processes; added++) {
			forgetLoadedPackage();
			await n8n.addWebhookProcess();
		}
		const node = omniVideoNode('Generate', {
			resource: 'video',
			operation: 'generate',
			prompt: '={{ $json.prompt }}',
			...ROW_SIZE,
			waitMode: 'callback',
			// Limit Wait Time is on the sandbox's clock too: 500 items on Pro take hours of it.
			callbackTimeoutMinutes: 24 * 60,
		});
		const prompts = Array.from({ length: setup.rows }, (_, i) => ({ prompt: rowPrompt(i) }));
		const execution = await n8n.execute(workflowOf([node], {}), 'Generate', itemsOf(...prompts));
		// Two virtual hours for 50 items, more for more (Pro's 200 requests an hour make 500 jobs 2.5 h at least).
		const giveUpMs = 2 * 3_600_000 * Math.max(1, setup.rows / 50);
		let timer: Parameters<typeof clearTimeout>[0];
		const run = await Promise.race([
			execution.finished,
			new Promise<undefined>((resolve) => (timer = setTimeout(resolve, giveUpMs / speed))),
		]).finally(() => clearTimeout(timer));
		if (!run) throw new Error(`execution ${execution.id} still ${execution.status} after ${giveUpMs / 3_600_000} virtual hours`);
		const refused = errorOf(run, 'Generate');
		if (refused && /items per run/.test(refused.message)) throw new NotSupportedYet(refused.message);
		const resumedAt = sandbox.clock.now();
		for (const item of outputOf(run, 'Generate')) {
			if (item.json.status === 'done' && typeof item.json.jobId === 'string') outcome.known.set(item.json.jobId, resumedAt);
			else {
				outcome.failedRows++;
				if (item.json.errorKind === 'rate_limit') outcome.surfaced429++;
			}
		}
	} finally {
		await n8n.stop();
	}
	return outcome;
}

/**
 * A real n8n is a server that has run workflows before the one measured: its modules are loaded
 * and its code paths warm. Strategy (d) starts an instance inside the measured window, so the
 * first (d) run of a process would count n8n's own start-up (about 0.35 s real, 18 s virtual at
 * ×50: 2.5 % of Pro's limit, 5 % of Premium's) as the node's time. One small Wait for Callback run
 * on a sandbox of its own, outside any measured window, loads and warms what (d) runs.
 */
export async function warmUpN8nEngine(): Promise<void> {
	const speed = 50;
	const sandbox = await startSandbox({ port: 0, speed, insecureCallbacks: true, clientClock: 'sandbox' });
	try {
		await n8nWaitForCallback({ sandbox, apiKey: sandbox.keys.premium, limits: PLANS.premium, rows: 2, speed }, true);
	} finally {
		await sandbox.close();
	}
}

/** The node refused the batch as it stands (Wait for Callback's item cap): the bench reports it so. */
export class NotSupportedYet extends Error {}

/** Drops the built package from Node's module cache, so that the next load is a process of its own. */
function forgetLoadedPackage(): void {
	const dist = join(PACKAGE_DIR, 'dist');
	for (const path of Object.keys(require.cache)) if (path.startsWith(dist)) delete require.cache[path];
}
