import type { Sandbox } from '../../../sandbox';
import { call, counts, mentionsRateLimit, type Connected } from './mcpHarness';

export interface AgentsRun {
	jobs: number;
	requests: number;
	requestsPerJob: number;
	/** 429s the service answered (from its journal) and 429s an agent was told of. */
	answered429: number;
	surfaced429: number;
	wallMs: number;
	longestCallMs: number;
}

/**
 * `count` agents, each asking for its own video and following nextStep (after its afterSeconds)
 * until the video is done, as an agent does; agent i talks to servers[i % servers.length].
 */
export async function agentsRun(sandbox: Sandbox, servers: Connected[], count: number, args: (i: number) => Record<string, unknown>): Promise<AgentsRun> {
	// A host lists the tools when it connects, before any call: a first call is not timed with it.
	await Promise.all(servers.map((server) => server.client.listTools()));
	const before = counts(sandbox);
	const started = Date.now();
	let surfaced429 = 0;
	let longestCallMs = 0;
	const timed = async (server: Connected, tool: string, toolArgs: Record<string, unknown>) => {
		const at = Date.now();
		const result = await call(server.client, tool, toolArgs);
		longestCallMs = Math.max(longestCallMs, Date.now() - at);
		if (mentionsRateLimit(result)) surfaced429++;
		if (result.isError) throw new Error(`${tool} failed: ${result.text}`);
		return result;
	};
	await Promise.all(
		Array.from({ length: count }, async (_, i) => {
			const server = servers[i % servers.length];
			let result = await timed(server, 'generate_video', args(i));
			while (result.output.status !== 'done') {
				const step = result.output.nextStep as { tool: string; arguments: Record<string, unknown>; afterSeconds: number };
				await new Promise((resolve) => setTimeout(resolve, step.afterSeconds * 1000));
				result = await timed(server, step.tool, step.arguments);
			}
		}),
	);
	const after = counts(sandbox);
	const jobs = after.jobs - before.jobs;
	const requests = after.requests - before.requests;
	return { jobs, requests, requestsPerJob: requests / jobs, answered429: after.refused429 - before.refused429, surfaced429, wallMs: Date.now() - started, longestCallMs };
}
