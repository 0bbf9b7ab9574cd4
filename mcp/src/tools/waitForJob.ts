import { z } from 'zod/v4';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { validateJobId } from '../../../core';
import type { ToolContext, ToolExtra } from '../context';
import { jobIdShape, jobOutputShape } from '../jobResult';
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
				'or a receipt if it is still rendering: call wait_for_job again then. Costs no credits.',
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
		const job = context.lastSeen.get(jobId) ?? (await connection.client.getJob(jobId, { signal: extra.signal, deadlineAtMs: deadlineMs }));
		const expectedEnd = context.expectedEnds.get(jobId);
		const expectedMs = expectedEnd !== undefined ? Math.max(1_000, expectedEnd - Date.now()) : context.settings.expectedRenderSeconds !== undefined ? context.settings.expectedRenderSeconds * 1000 : undefined;
		return await waitWithin(context, connection, extra, { job, deadlineMs, expectedMs, progress });
	} finally {
		progress.stop();
	}
}
