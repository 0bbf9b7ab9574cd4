import { z } from 'zod/v4';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { validateJobId } from '../../../core';
import type { ToolContext, ToolExtra } from '../context';
import { jobIdShape, jobOutputShape } from '../jobResult';
import { knownJob } from '../knownJob';
import { progressFor } from '../progress';
import { boundedWait, MAX_WAIT_SECONDS } from '../settings';
import { toolError } from '../toolError';
import { waitWithin } from '../waitWithin';

export function registerWaitForJob(server: McpServer, context: ToolContext): void {
	server.registerTool(
		'wait_for_job',
		{
			title: 'Wait for a video job',
			description:
				`Waits up to waitSeconds (default ${context.settings.waitSeconds}) for an Omni Video job to end, looking it up as seldom as the plan allows, then answers with the video (videoUrl and a video/mp4 link), the failure's reason, ` +
				'or a receipt if it is still rendering: call wait_for_job again after nextStep.afterSeconds then. Costs no credits.',
			inputSchema: { ...jobIdShape, waitSeconds: z.number().optional().describe(`How long to wait, 0 to ${MAX_WAIT_SECONDS} seconds.`) },
			outputSchema: jobOutputShape,
			annotations: { title: 'Wait for a video job', readOnlyHint: true, idempotentHint: true, openWorldHint: true },
		},
		(args, extra) => wait(context, args, extra).catch(toolError),
	);
}

async function wait(context: ToolContext, args: { jobId: string; waitSeconds?: number }, extra: ToolExtra): Promise<CallToolResult> {
	const jobId = validateJobId(args.jobId);
	const waitSeconds = boundedWait(args.waitSeconds, context.settings.waitSeconds);
	const deadlineMs = Date.now() + waitSeconds * 1000;
	const connection = context.connect(extra);
	const progress = progressFor(extra, waitSeconds);
	try {
		progress.say(`Looking up job ${jobId}`);
		const known = await knownJob(context, connection, jobId, { signal: extra.signal, deadlineAtMs: deadlineMs });
		return await waitWithin(context, connection, extra, { ...known, deadlineMs, progress });
	} finally {
		progress.stop();
	}
}
