import { agentsRun } from './support/agents';
import { overStdio, RUN_ROWS, sandboxFor, serverEnv, type Connected } from './support/mcpHarness';

jest.setTimeout(240_000);

/**
 * 16 agents on one Pro key, through one server process and through two on one records folder.
 * Minutes of agents waiting on renders, with 16 calls and up to two servers at once: it runs as its
 * own step of .ci/run (MCP_AGENTS_TEST=1), not beside the time-scaled engine suites of npm test,
 * whose timings a loaded machine stretches.
 */
const maybe = process.env.MCP_AGENTS_TEST === '1' ? describe.each(RUN_ROWS) : describe.skip.each(RUN_ROWS);

maybe('16 agents following nextStep, --service %s, the %s client', (reading, _client, { client: kind }) => {
	const servers: Connected[] = [];
	const start = async (env: Record<string, string>) => {
		const server = await overStdio(env, [], kind);
		servers.push(server);
		return server;
	};

	it('16 agents over two processes stay within the plan as one process does', async () => {
		const args = (i: number) => ({ prompt: `A lantern festival, shot ${i}`, resolution: '720P', duration: 4 });
		const run = async (processes: number) => {
			const sandbox = await sandboxFor(reading);
			try {
				const env = serverEnv(sandbox);
				const connected = await Promise.all(Array.from({ length: processes }, () => start(env)));
				return await agentsRun(sandbox, connected, 16, args);
			} finally {
				await Promise.all(servers.splice(0).map((server) => server.close()));
				await sandbox.close();
			}
		};
		const one = await run(1);
		const two = await run(2);
		for (const result of [one, two]) {
			expect(result.jobs).toBe(16);
			expect(result.surfaced429).toBe(0);
			expect(result.answered429).toBeLessThanOrEqual(2);
			// Every call answers within its bound (45 s), and a little for the protocol.
			expect(result.longestCallMs).toBeLessThan(47_000);
		}
		expect(two.requests).toBeLessThanOrEqual(Math.ceil(one.requests * 1.05) + 1);
		expect(one.requestsPerJob).toBeLessThanOrEqual(2.5);
	});
});
