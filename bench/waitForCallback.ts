/* eslint-disable no-console, @n8n/community-nodes/no-restricted-globals -- benchmarks run by people, never shipped */
/**
 * `npx tsx bench/waitForCallback.ts [--lookup] [rows] [seed...]`: strategy (d) alone, the n8n
 * node's Wait for Callback on n8n's engine (signed callbacks, or confirmed by lookup), Pro and
 * Premium, with the bench's options for (d) (×N8N_SPEED, the node on the sandbox's clock,
 * log-normal render times, spread 0.25); prints wall ÷ the plan's limit and requests a job for
 * each run. For working on (d) without running the whole bench.
 */
import buildPackagesIfStale from '../test/support/globalSetup';
import { BENCH_PLANS, runBatch } from './sideBySide';
import { N8N_SPEED, n8nWaitForCallback, warmUpN8nEngine } from './n8nCallback';
import { perJob, ratio } from './targets';

async function main(): Promise<void> {
	const args = process.argv.slice(2);
	const signed = !args.includes('--lookup');
	const [rowsArg, ...seedArgs] = args.filter((arg) => !arg.startsWith('--'));
	const rows = Number(rowsArg) || 50;
	const seeds = seedArgs.length > 0 ? seedArgs.map(Number) : [10];
	buildPackagesIfStale();
	await warmUpN8nEngine();
	for (const seed of seeds) {
		for (const plan of BENCH_PLANS) {
			const result = await runBatch('n8n', plan, { rows, speed: N8N_SPEED, renderTimes: { seed, spread: 0.25 } }, (s) => n8nWaitForCallback(s, signed), 'sandbox');
			console.log(
				`${signed ? 'signed' : 'by lookup'}, seed ${seed} ${plan.name.padEnd(8)} ${rows} rows: ${ratio(result).toFixed(3)}× the limit, ${perJob(result).toFixed(2)} requests/job, ${result.received429} 429s, ${result.duplicateJobs} duplicates, ${result.failedRows + result.unknownJobs} failed/unknown, known after end p95 ${(result.knownDelayP95Ms / 1000).toFixed(1)} s (${(result.realMs / 1000).toFixed(0)} s real)`,
			);
		}
	}
}

main().catch((error: unknown) => {
	console.error(error);
	process.exit(1);
});
