/* eslint-disable no-console, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- benchmarks run by people, never shipped */
/**
 * `npm run bench:mcp`: the MCP surface, as an agent drives it. Ten generate_video calls at once on
 * a Pro key through the SDK's Client over stdio, against the sandbox at real speed (renders of
 * 30–90 s, so the 45 s wait bound is met), each followed through its nextStep until done, then
 * each call made once more with the same arguments (an agent retrying); on both readings of the
 * service. Counted from the sandbox's journal: requests a job, 429s the sandbox answered and 429s
 * the agent saw, jobs made per retried call; timed: the longest single call. Then, as agents run it
 * on one machine: 16 agents each following nextStep (after its afterSeconds) until done, through
 * one server process and through two on one records folder (a user's two clients), beside the
 * floor (a create and one look at the job's end); and a retry after the server was restarted.
 * Then, as a team runs it: 20 agents over three HTTP replicas on one Redis behind a round-robin
 * proxy, beside one replica; retries sent to every replica; and 10 agents with the service's
 * callbacks to the proxy, signed and unsigned.
 * Each reading runs on one protocol era, as the suites do (RUNS): the default reading with the v2
 * SDK's client negotiating 2026-07-28, the strictest with the last 1.x SDK's (2025-11-25).
 * Results go to bench/results/mcp.json and mcp.md. `-- --team` runs the team's rows alone and keeps
 * the others from the last run (`-- --no-team`: the reverse). `-- --records` measures the records'
 * cost as they grow instead (bench/mcpRecords.ts).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERA_OF, type ClientKind } from '../mcp/test/support/clients';
import { call, counts, mentionsRateLimit, overStdio, RUNS, sandboxFor, serverEnv, type Connected, type Reading, type Run } from '../mcp/test/support/mcpHarness';
import { agentsRun, type AgentsRun } from '../mcp/test/support/agents';
import { startTeam, type TeamOptions } from '../mcp/test/support/team';
import { recordsBench, writeRecordsResults } from './mcpRecords';

const CALLS = 10;

/** A result's reading and the protocol its client spoke (results from before the eras name the reading alone: 2025). */
const label = (r: { reading: Reading; client?: ClientKind }): string => (r.client ? `${r.reading}, ${ERA_OF[r.client] === 'modern' ? '2026-07-28' : '2025'} (${r.client})` : r.reading);
const ARGS = (i: number) => ({ prompt: `A street market at dusk, shot ${i}`, resolution: '720P', duration: 4 });

interface McpBenchResult {
	reading: Reading;
	client?: ClientKind;
	calls: number;
	jobs: number;
	requestsPerJob: number;
	longestCallMs: number;
	callsMade: number;
	surfaced429: number;
	sandbox429: number;
	jobsPerRetriedCall: number;
	wallMs: number;
}

async function onReading({ reading, client }: Run): Promise<McpBenchResult> {
	// Speed 1: the service's own render times, the server's own estimates.
	const sandbox = await sandboxFor(reading, { speed: 1 });
	const env = serverEnv(sandbox);
	delete env.OMNI_VIDEO_EXPECTED_RENDER_SECONDS;
	const server = await overStdio(env, [], client);
	const started = Date.now();
	let longestCallMs = 0;
	let callsMade = 0;
	let surfaced429 = 0;
	const timedCall = async (name: string, args: Record<string, unknown>) => {
		const at = Date.now();
		const result = await call(server.client, name, args);
		longestCallMs = Math.max(longestCallMs, Date.now() - at);
		callsMade++;
		if (mentionsRateLimit(result)) surfaced429++;
		if (result.isError) throw new Error(`${name} failed: ${result.text}`);
		return result;
	};
	try {
		await Promise.all(
			Array.from({ length: CALLS }, async (_, i) => {
				let result = await timedCall('generate_video', ARGS(i));
				while (result.output.status !== 'done') {
					const step = result.output.nextStep as { tool: string; arguments: Record<string, unknown> };
					result = await timedCall(step.tool, step.arguments);
				}
			}),
		);
		const made = counts(sandbox);
		const wallMs = Date.now() - started;
		await Promise.all(Array.from({ length: CALLS }, (_, i) => timedCall('generate_video', ARGS(i))));
		const after = counts(sandbox);
		return {
			reading,
			client,
			calls: CALLS,
			jobs: made.jobs,
			requestsPerJob: made.requests / made.jobs,
			longestCallMs,
			callsMade,
			surfaced429,
			sandbox429: after.refused429,
			jobsPerRetriedCall: (after.creates - made.creates) / CALLS,
			wallMs,
		};
	} finally {
		await server.close();
		await sandbox.close();
	}
}

const AGENTS = 16;

interface MachineResult {
	reading: Reading;
	client?: ClientKind;
	oneProcess: AgentsRun;
	twoProcesses: AgentsRun;
	jobsMadeByRetryAfterRestart: number;
}

/** Servers on one records folder, at real speed, the server's own estimates. */
async function onMachine({ reading, client }: Run): Promise<MachineResult> {
	const agentArgs = (i: number) => ({ prompt: `A lantern festival, shot ${i}`, resolution: '720P', duration: 4 });
	const withServers = async <T>(processes: number, work: (sandbox: Awaited<ReturnType<typeof sandboxFor>>, servers: Connected[], env: Record<string, string>) => Promise<T>): Promise<T> => {
		const sandbox = await sandboxFor(reading, { speed: 1 });
		const env = serverEnv(sandbox);
		delete env.OMNI_VIDEO_EXPECTED_RENDER_SECONDS;
		const servers = await Promise.all(Array.from({ length: processes }, () => overStdio(env, [], client)));
		try {
			return await work(sandbox, servers, env);
		} finally {
			await Promise.all(servers.map((server) => server.close()));
			await sandbox.close();
		}
	};
	const oneProcess = await withServers(1, (sandbox, servers) => agentsRun(sandbox, servers, AGENTS, agentArgs));
	const twoProcesses = await withServers(2, (sandbox, servers) => agentsRun(sandbox, servers, AGENTS, agentArgs));
	const jobsMadeByRetryAfterRestart = await withServers(1, async (sandbox, servers, env) => {
		const args = { prompt: 'A retried call after a restart', resolution: '720P', duration: 4, waitSeconds: 0 };
		await call(servers[0].client, 'generate_video', args);
		await servers[0].close();
		const before = counts(sandbox).jobs;
		const restarted = await overStdio(env, [], client);
		servers.push(restarted);
		await call(restarted.client, 'generate_video', args);
		return counts(sandbox).jobs - before;
	});
	return { reading, client, oneProcess, twoProcesses, jobsMadeByRetryAfterRestart };
}

function machineReport(results: MachineResult[]): string[] {
	const row = (reading: string, layout: string, r: AgentsRun | undefined) =>
		r
			? `| ${reading} | ${layout} | ${r.jobs} | ${r.requestsPerJob.toFixed(2)} | ${r.requests} | ${r.answered429} | ${r.surfaced429} | ${(r.longestCallMs / 1000).toFixed(1)} s | ${(r.wallMs / 1000).toFixed(0)} s |`
			: `| ${reading} | ${layout} | ${AGENTS} | 2.00 | ${2 * AGENTS} | 0 | 0 | | |`;
	return [
		`## ${AGENTS} agents on one machine`,
		'',
		`${AGENTS} agents on one Pro key, each asking for its own video (720P, 4 s) and following \`nextStep\` after its \`afterSeconds\` until done, through one server process or two on the same records folder (two clients of one user). The floor is an agent that creates and looks once, at the job's end.`,
		'',
		'| Reading, protocol | Layout | Jobs | Requests a job | Requests | 429s the service answered | 429s an agent saw | Longest call | Wall |',
		'|---|---|---|---|---|---|---|---|---|',
		...results.flatMap((r) => [row(label(r), 'floor: create + one look', undefined), row(label(r), 'one process', r.oneProcess), row(label(r), 'two processes', r.twoProcesses)]),
		'',
		`Jobs made by a retried \`generate_video\` after the server was restarted: ${results.map((r) => `${r.jobsMadeByRetryAfterRestart} (${label(r)})`).join(', ')}.`,
		'',
	];
}

const TEAM_AGENTS = 20;
const CALLBACK_AGENTS = 10;

interface TeamResult {
	reading: Reading;
	client?: ClientKind;
	oneReplica: AgentsRun;
	threeReplicas: AgentsRun;
	/** Jobs made by the same call sent again through the proxy, once to each replica. */
	jobsMadeByRetriesAcrossReplicas: number;
	/** 10 agents over three replicas, the service's callbacks to the proxy; signed only where the service signs. */
	signedCallbacks?: AgentsRun;
	unsignedCallbacks: AgentsRun;
}

/** Replicas on one Redis behind a round-robin proxy, at real speed, the servers on their own estimates. */
async function onTeam({ reading, client }: Run): Promise<TeamResult> {
	const teamArgs = (i: number) => ({ prompt: `A paper boat, take ${i}`, resolution: '720P', duration: 4 });
	const withTeam = async <T>(options: TeamOptions, work: (team: Awaited<ReturnType<typeof startTeam>>) => Promise<T>): Promise<T> => {
		const team = await startTeam(reading, { ...options, realSpeed: true, client });
		try {
			return await work(team);
		} finally {
			await team.close();
		}
	};
	const agents = (count: number) => (team: Awaited<ReturnType<typeof startTeam>>) => Promise.all(Array.from({ length: count }, () => team.connect())).then((clients) => agentsRun(team.sandbox, clients, count, teamArgs));
	// Side by side, each on its own sandbox, Redis and key: the same machine's load on both.
	const [oneReplica, threeReplicas] = await Promise.all([withTeam({ replicaCount: 1 }, agents(TEAM_AGENTS)), withTeam({ replicaCount: 3 }, agents(TEAM_AGENTS))]);
	const jobsMadeByRetriesAcrossReplicas = await withTeam({ replicaCount: 3 }, async (team) => {
		const args = { prompt: 'A retried call on another replica', resolution: '720P', duration: 4, waitSeconds: 0 };
		await call((await team.connect()).client, 'generate_video', args);
		const before = counts(team.sandbox).creates;
		// Each client's requests go round the replicas: three retries reach all three.
		for (let retry = 0; retry < 3; retry++) await call((await team.connect()).client, 'generate_video', args);
		return counts(team.sandbox).creates - before;
	});
	const signedCallbacks = reading === 'spec' ? undefined : await withTeam({ callbacks: 'signed' }, agents(CALLBACK_AGENTS));
	const unsignedCallbacks = await withTeam({ callbacks: 'unsigned' }, agents(CALLBACK_AGENTS));
	return { reading, client, oneReplica, threeReplicas, jobsMadeByRetriesAcrossReplicas, signedCallbacks, unsignedCallbacks };
}

function teamReport(results: TeamResult[], date: string): string[] {
	const row = (reading: string, layout: string, r: AgentsRun | undefined) =>
		r ? `| ${reading} | ${layout} | ${r.jobs} | ${r.requestsPerJob.toFixed(2)} | ${r.requests} | ${r.answered429} | ${r.surfaced429} | ${(r.longestCallMs / 1000).toFixed(1)} s | ${(r.wallMs / 1000).toFixed(0)} s |` : `| ${reading} | ${layout} | not on this reading: the service signs no callback | | | | | | |`;
	return [
		'## A team: replicas on one Redis behind a proxy',
		'',
		`${date} UTC. Streamable HTTP replicas with their records in one Redis (Debian's redis-server), behind a round-robin proxy without sticky sessions; the SDK client over HTTP with the Pro key as its bearer header; each agent follows \`nextStep\` after its \`afterSeconds\` until done (720P, 4 s). ${TEAM_AGENTS} agents on one replica and on three ran side by side, each on a sandbox, Redis and key of its own. With callbacks, ${CALLBACK_AGENTS} agents over three replicas, \`--public-url\` the proxy's.`,
		'',
		'| Reading, protocol | Layout | Jobs | Requests a job | Requests | 429s the service answered | 429s an agent saw | Longest call | Wall |',
		'|---|---|---|---|---|---|---|---|---|',
		...results.flatMap((r) => [
			row(label(r), `${TEAM_AGENTS} agents, one replica`, r.oneReplica),
			row(label(r), `${TEAM_AGENTS} agents, three replicas`, r.threeReplicas),
			row(label(r), `HTTP with callbacks, signed (${CALLBACK_AGENTS} agents)`, r.signedCallbacks),
			row(label(r), `HTTP with callbacks, unsigned (${CALLBACK_AGENTS} agents)`, r.unsignedCallbacks),
		]),
		'',
		`Three replicas' wall against one's: ${results.map((r) => `${(r.threeReplicas.wallMs / r.oneReplica.wallMs).toFixed(2)}× (${label(r)})`).join(', ')}. Jobs made by a call retried once on each replica: ${results.map((r) => `${r.jobsMadeByRetriesAcrossReplicas} (${label(r)})`).join(', ')}.`,
		'',
	];
}

function report(results: McpBenchResult[], date: string, machine: MachineResult[], team: TeamResult[], teamDate: string): string {
	const rows = results.map(
		(r) =>
			`| ${label(r)} | ${r.jobs} | ${r.requestsPerJob.toFixed(2)} | ${(r.longestCallMs / 1000).toFixed(1)} s | ${r.callsMade} | ${r.surfaced429} | ${r.sandbox429} | ${r.jobsPerRetriedCall} | ${(r.wallMs / 1000).toFixed(0)} s |`,
	);
	return [
		'# MCP server: measured',
		'',
		`${date} UTC, \`npm run bench:mcp\`: ${CALLS} \`generate_video\` calls at once on a Pro key (5 jobs at once, 30 requests a minute),`,
		'the SDK client over stdio, the sandbox at real speed (720P, 4 s: renders drawn across 30–90 s), the default 45 s bound.',
		'Each call is followed through its `nextStep` until its video is done, then made once more with the same arguments.',
		'',
		'| Reading, protocol | Jobs | Requests a job | Longest call | Calls made | 429s the agent saw | 429s the sandbox answered | Jobs made per retried call | Wall |',
		'|---|---|---|---|---|---|---|---|---|',
		...rows,
		'',
		...machineReport(machine),
		...teamReport(team, teamDate),
	].join('\n');
}

interface McpBenchFile {
	date: string;
	results: McpBenchResult[];
	machine: MachineResult[];
	teamDate: string;
	team: TeamResult[];
}

async function main(): Promise<void> {
	const dir = join(__dirname, 'results');
	// The records' cost alone (bench/mcpRecords.ts), in results of their own.
	if (process.argv.includes('--records')) return writeRecordsResults(await recordsBench(), dir);
	const only = process.argv.includes('--team') ? 'team' : process.argv.includes('--no-team') ? 'single' : 'all';
	const file = join(dir, 'mcp.json');
	// A part not run keeps its rows (and their date) from the last run.
	const last = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Partial<McpBenchFile>) : {};
	const date = new Date().toISOString().slice(0, 16).replace('T', ' ');
	const out: McpBenchFile = { date: last.date ?? date, results: last.results ?? [], machine: last.machine ?? [], teamDate: last.teamDate ?? date, team: last.team ?? [] };
	if (only !== 'team') Object.assign(out, { date, results: [], machine: [] });
	if (only !== 'single') Object.assign(out, { teamDate: date, team: [] });
	for (const run of RUNS) {
		if (only !== 'team') {
			const result = await onReading(run);
			console.log(JSON.stringify(result));
			out.results.push(result);
			const onOneMachine = await onMachine(run);
			console.log(JSON.stringify(onOneMachine));
			out.machine.push(onOneMachine);
		}
		if (only !== 'single') {
			const team = await onTeam(run);
			console.log(JSON.stringify(team));
			out.team.push(team);
		}
	}
	writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
	writeFileSync(join(dir, 'mcp.md'), report(out.results, out.date, out.machine, out.team, out.teamDate));
}

main().then(
	() => process.exit(0),
	(error: unknown) => {
		console.error(error);
		process.exit(1);
	},
);
