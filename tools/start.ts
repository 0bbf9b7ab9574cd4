/* eslint-disable no-console, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- a command-line tool for people; never shipped */
/**
 * `npm start`: a working n8n with Omni Video in it, for a first look. Builds the package, starts the
 * sandbox (a local Omni Video API) and the newest n8n this package supports (installed into
 * ~/.cache/omni-video-e2e on the first run, with the Node.js it needs from the npm registry when the
 * machine's is older; `npm start -- --n8n 1.123.50` starts another version), installs the package as n8n's community-package installer does, imports the
 * credential and the example workflows, creates the owner account, and prints where to log in.
 * Ctrl-C stops everything it started. Each start is a fresh n8n: export what you want to keep.
 * The scheduled pipeline example gets its Data Table of sample prompts (SAMPLE_PROMPTS), made
 * through n8n's REST API once the owner exists.
 *
 * Under CI (`CI=true`) or with `npm start -- --once`, it does the main job once instead of waiting
 * for a person: runs the text-to-video example through n8n against the sandbox, checks the MP4
 * n8n stored is the one the CDN served, prints what happened, stops everything and exits (1 when
 * the job failed). That is how `.ci/run` proves the README's first command.
 */
import net from 'node:net';
import { join } from 'node:path';
import { NEWEST_N8N, cacheDir, n8nVersionArg, resolveN8nVersion } from '../test/e2e/cache';
import { packPackage, startEnvironment } from '../test/e2e/environment';
import { EXAMPLE_SCENARIOS } from '../test/e2e/exampleScenarios';
import { OWNER } from '../test/e2e/n8nServer';
import { freePort, shutdown, stopAllOnExit, onShutdown } from '../test/e2e/processes';
import { PIPELINE_TABLE, createPipelineTables, insertRows, withDataTables } from '../test/e2e/dataTables';

/** Do the main job once and stop, rather than wait for a person at the editor. */
const ONCE = process.env.CI === 'true' || process.argv.includes('--once');

/** The port people expect when it is free, else any free one. */
async function preferred(port: number): Promise<number> {
	const free = await new Promise<boolean>((resolve) => {
		const server = net.createServer();
		server.once('error', () => resolve(false));
		server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
	});
	return free ? port : freePort();
}

/** The rows the pipeline example finds in its table on a fresh n8n: small videos, made in seconds on the sandbox. */
const SAMPLE_PROMPTS = [
	{ prompt: 'A paper boat sailing down a rainy street at dusk, cinematic', resolution: '720P', duration: 4, status: 'pending' },
	{ prompt: 'A hummingbird drinking from a red flower, slow motion', resolution: '720P', duration: 4, status: 'pending' },
	{ prompt: 'Morning fog lifting over a quiet harbour, wide shot', resolution: '1080P', duration: 6, status: 'pending' },
];

async function main(): Promise<void> {
	stopAllOnExit();
	const VERSION = await resolveN8nVersion(n8nVersionArg() ?? NEWEST_N8N);
	console.log(`Starting Omni Video in n8n ${VERSION} (cache: ${cacheDir()})`);
	const tarball = await packPackage();
	const environment = await startEnvironment({
		version: VERSION,
		tarball,
		userFolder: join(cacheDir(), 'start', `n8n-${VERSION}`),
		sandboxPort: await preferred(4010),
		n8nPort: await preferred(5678),
		onlyExampleCredential: true,
	});
	onShutdown(() => environment.stop());
	const { n8n, sandbox, examples } = environment;
	const tables = await createPipelineTables(n8n);
	await insertRows(n8n, tables.prompts, SAMPLE_PROMPTS);
	const pipeline = examples.find((example) => example.file === 'scheduled-pipeline-from-data-table.json');
	// The example ships with no table picked (n8n 1.x finds one by ID only): this n8n's are picked for it.
	if (pipeline) await n8n.updateWorkflow(pipeline.id, withDataTables(await n8n.workflow(pipeline.id), tables.ids));
	if (ONCE) {
		const mainJob = EXAMPLE_SCENARIOS.find((scenario) => scenario.name === 'example-text-to-video')!;
		console.log(`Running the text-to-video example once in n8n ${VERSION} (${process.env.CI === 'true' ? 'CI=true' : '--once'})`);
		console.log(`Done: ${await mainJob.run(environment.context)}`);
		await shutdown();
		// Node's fetch keeps idle sockets to the stopped servers for a while: leave now, done.
		process.exit(0);
	}
	const textToVideo = examples.find((example) => example.file === 'text-to-video-with-download.json');
	console.log(`
Omni Video is ready in n8n ${VERSION}.

  Editor:    ${n8n.url}
  Login:     ${OWNER.email} / ${OWNER.password}
  Try:       ${n8n.url}/workflow/${textToVideo?.id ?? ''}  → Execute workflow (the video arrives in about a minute)
  Pipeline:  ${n8n.url}/workflow/${pipeline?.id ?? ''}  → Execute workflow: the ${SAMPLE_PROMPTS.length} rows of the Data Table "${PIPELINE_TABLE}" become videos, each row once (or activate it: every 15 minutes)
  Sandbox:   ${sandbox.url} (a local Omni Video API, 10× faster than the real one; key ${sandbox.keys.pro})

The credential "Omni Video account" and the ${examples.length} example workflows are installed; the
"job completed" trigger workflow is active. Press Ctrl-C to stop n8n and the sandbox.`);
	await new Promise<never>(() => undefined);
}

main().catch(async (error: unknown) => {
	console.error(error instanceof Error ? error.message : error);
	await shutdown();
	process.exit(1);
});
