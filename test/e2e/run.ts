/* eslint-disable no-console, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- end-to-end tooling, never shipped */
/**
 * `npm run test:e2e`: the package on real n8n servers (the newest supported 2.x and the oldest 1.x
 * by default), as users run it; a version the machine's Node cannot run gets its Node from npm. Each scenario prints one line of evidence; the run ends non-zero when one fails.
 *
 *   E2E_N8N_VERSIONS=2.41.1           (or --versions=2.41.1,1.123.50, or --n8n latest)  which n8n
 *                                     versions (a dist-tag such as `latest` is resolved on npm)
 *   --scale                           queue mode only, with its measurements (Poll over workers,
 *                                     500 items), by hand; figures to docs/benchmarks.md
 *   --install                         only install the versions (and the Node they need), then stop
 *   --core                            only the core scenarios (CORE_SCENARIOS)
 *   --matrix                          the support matrix (cache.ts's MATRIX_VERSIONS), the core
 *                                     scenarios on one process each; results to docs/n8n-matrix.md
 *   E2E_ONLY=name,name                (or --only=…)                    only these scenarios
 *   E2E_QUEUE=0 / E2E_BROWSER=0       (or --no-queue, --no-browser)    skip queue mode / the browser check
 *   E2E_KNOWN_FAILING=name,name       failures of these are reported as expected, not fatal
 *   E2E_SKIP=name,name                these are not run (a check another CI step runs)
 *   E2E_SPEED=1                       (or --speed=1) the sandbox's speed in the one-process
 *                                     scenarios (default 10, environment.ts); 1 is real speed, where
 *                                     docs/benchmarks.md's headline figures come from
 *   E2E_CALLBACK_SPEED=1              (or --callback-speed=1) queue mode's 50-item checks (default 2)
 *   E2E_LARGE_SPEED=1                 (or --large-speed=1) queue mode's 500-item checks (default 10)
 *   OMNI_VIDEO_E2E_CACHE=/path        the cache folder (default ~/.cache/omni-video-e2e)
 */
import { join } from 'node:path';
import { MATRIX_VERSIONS, N8N_VERSIONS, cacheDir, ensureN8n, n8nNode, n8nVersionArg, resolveN8nVersion } from './cache';
import { writeMatrix } from './matrixReport';
import { shutdown, stopAllOnExit } from './processes';
import { packPackage, startEnvironment } from './environment';
import { SCENARIOS, type Scenario } from './scenarios';
import { EXAMPLE_SCENARIOS } from './exampleScenarios';
import type { Context } from './context';

export interface Outcome {
	label: string;
	name: string;
	ok: boolean;
	expected: boolean;
	line: string;
}

function option(flag: string, env: string): string | undefined {
	const arg = process.argv.find((value) => value.startsWith(`--${flag}=`));
	return arg ? arg.slice(flag.length + 3) : process.env[env];
}
const list = (value: string | undefined) => (value ?? '').split(',').map((entry) => entry.trim()).filter(Boolean);
function positiveNumber(value: string | undefined, name: string): number | undefined {
	if (value === undefined || value === '') return undefined;
	const number = Number(value);
	if (!(number > 0)) throw new Error(`${name} must be a number above 0, not "${value}"`);
	return number;
}
const enabled = (flag: string, env: string) => !matrix && !process.argv.includes(`--no-${flag}`) && process.env[env] !== '0';

const matrix = process.argv.includes('--matrix');
const scale = process.argv.includes('--scale');
const browser = !scale && enabled('browser', 'E2E_BROWSER');
// `--n8n <version>`: one version, as `npm run test:e2e -- --n8n latest` asks.
const versions = list(option('versions', 'E2E_N8N_VERSIONS') ?? n8nVersionArg());
/**
 * The core scenarios: the main job, each wait mode, the trigger, a retry, a failed job, bad input.
 * What CI runs on the oldest supported n8n and the matrix on each release (`--core`).
 */
const CORE_SCENARIOS = ['example-text-to-video', 'text-to-video-poll-download', 'wait-for-callback-one-item', 'wait-for-callback-many-signed', 'wait-for-callback-many-lookup', 'trigger-once-per-real-callback', 'retry-returns-the-jobs-already-made', 'failed-job', 'bad-input-sends-nothing'];
const core = matrix || process.argv.includes('--core');
const named = list(option('only', 'E2E_ONLY'));
const only = named.length ? named : core ? CORE_SCENARIOS : [];
const knownFailing = list(process.env.E2E_KNOWN_FAILING);
const skipped = list(process.env.E2E_SKIP);
/** E2E_LARGE_SPEED (or --large-speed=…): the sandbox's speed in the 500-item checks; unset, theirs. */
const largeSpeed = positiveNumber(option('large-speed', 'E2E_LARGE_SPEED'), 'E2E_LARGE_SPEED');
/** E2E_CALLBACK_SPEED (or --callback-speed=…): the sandbox's speed in queue mode's 50-item checks; unset, theirs. */
const callbackSpeed = positiveNumber(option('callback-speed', 'E2E_CALLBACK_SPEED'), 'E2E_CALLBACK_SPEED');
const outcomes: Outcome[] = [];

/** Runs one check and prints its line: ✓ passed, ✗ failed, ~ failed as listed in E2E_KNOWN_FAILING. */
async function runCheck(label: string, name: string, fn: () => Promise<string>): Promise<void> {
	if ((only.length && !only.includes(name)) || skipped.includes(name)) return;
	const started = Date.now();
	const expected = knownFailing.includes(name);
	try {
		const line = await fn();
		outcomes.push({ label, name, ok: true, expected, line });
		console.log(`✓ ${label} ${name}: ${line} [${((Date.now() - started) / 1000).toFixed(1)} s]${expected ? ' (listed as known failing: remove it from E2E_KNOWN_FAILING)' : ''}`);
	} catch (error) {
		const line = error instanceof Error ? error.message : String(error);
		outcomes.push({ label, name, ok: false, expected, line });
		console.log(`${expected ? '~' : '✗'} ${label} ${name}: ${expected ? 'KNOWN FAILING: ' : 'FAILED: '}${line} [${((Date.now() - started) / 1000).toFixed(1)} s]`);
	}
}

async function runScenarios(label: string, context: Context, scenarios: Scenario[]): Promise<void> {
	for (const scenario of scenarios) await runCheck(label, scenario.name, () => scenario.run(context));
}

async function main(): Promise<void> {
	stopAllOnExit();
	const started = Date.now();
	const selected = await Promise.all((versions.length ? versions : matrix ? [...MATRIX_VERSIONS] : [...N8N_VERSIONS]).map(resolveN8nVersion));
	console.log(`Omni Video end-to-end: n8n ${selected.join(', ')}; cache ${cacheDir()}`);
	if (process.argv.includes('--install')) {
		for (const version of selected) await ensureN8n(version);
		return;
	}
	const tarball = await packPackage();
	for (const version of selected) {
		const label = `[n8n ${version}]`;
		let environment: Awaited<ReturnType<typeof startEnvironment>>;
		try {
			// The matrix keeps its own data folders: it may run beside another run of the suite.
			environment = await startEnvironment({ version, tarball, userFolder: join(cacheDir(), 'data', ...(matrix ? ['matrix'] : []), `n8n-${version}`) });
		} catch (error) {
			// An n8n that does not install or start here fails in one line; the other versions still run.
			await runCheck(label, 'install-and-start', () => Promise.reject(error));
			continue;
		}
		try {
			if (!scale) await runScenarios(label, environment.context, [...EXAMPLE_SCENARIOS, ...SCENARIOS]);
			if (browser) {
				const { runBrowserCheck } = await import('./browser');
				await runBrowserCheck(label, environment.context, runCheck);
			}
		} finally {
			await environment.stop();
		}
		if (enabled('queue', 'E2E_QUEUE')) {
			const { runQueueMode } = await import('./queueMode');
			await runQueueMode(version, tarball, runCheck, { named: only, scale, largeSpeed, callbackSpeed });
		}
	}
	const failed = outcomes.filter((outcome) => !outcome.ok && !outcome.expected);
	const expected = outcomes.filter((outcome) => !outcome.ok && outcome.expected);
	const passed = outcomes.filter((outcome) => outcome.ok);
	console.log(`\nend-to-end: ${passed.length} passed, ${failed.length} failed, ${expected.length} known failing, in ${Math.round((Date.now() - started) / 1000)} s`);
	for (const outcome of failed) console.log(`  ✗ ${outcome.label} ${outcome.line.split('\n')[0]}`);
	for (const version of selected) {
		const own = outcomes.filter((outcome) => outcome.label.startsWith(`[n8n ${version}`));
		console.log(`  n8n ${version}: ${own.filter((outcome) => outcome.ok).length} passed, ${own.filter((outcome) => !outcome.ok).length} failed`);
	}
	if (matrix) {
		const file = await writeMatrix(selected.map((version) => ({ version, node: n8nNode(version), outcomes: outcomes.filter((outcome) => outcome.label === `[n8n ${version}]`) })));
		console.log(`  the matrix's results: ${file}`);
	}
	process.exitCode = failed.length ? 1 : 0;
}

main()
	.catch((error: unknown) => {
		console.error(error);
		process.exitCode = 1;
	})
	.finally(() => void shutdown().then(() => process.exit()));
