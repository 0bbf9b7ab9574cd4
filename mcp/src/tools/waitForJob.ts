import { z } from 'zod';
import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import { validateJobId } from '../../../core';
import { viewLink } from '../appView';
import type { ToolContext } from '../context';
import type { ToolCall } from '../toolCall';
import { runTool } from '../toolRun';
import { jobIdShape, jobOutputShape } from '../jobResult';
import { knownJob } from '../knownJob';
import { ownJob } from '../ownJob';
import { progressFor } from '../progress';
import { boundedWait, MAX_WAIT_SECONDS } from '../settings';
import { waitWithin } from '../waitWithin';

export function registerWaitForJob(server: McpServer, context: ToolContext): void {
	server.registerTool(
		'wait_for_job',
		{
			title: 'Wait for a video job',
			description:
				`Waits up to waitSeconds (default ${context.settings.waitSeconds}) for an Omni Video job to end, looking it up as seldom as the plan allows, then answers with the video (videoUrl and a video/mp4 link), the failure's reason, ` +
				'or a receipt if it is still rendering: call wait_for_job again after nextStep.afterSeconds then. Costs no credits.',
			inputSchema: z.object({ ...jobIdShape, waitSeconds: z.number().optional().describe(`How long to wait, 0 to ${MAX_WAIT_SECONDS} seconds.`) }),
			outputSchema: z.object(jobOutputShape),
			annotations: { title: 'Wait for a video job', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
			_meta: viewLink,
		},
		(args, ctx) => runTool(context, ctx, 'wait_for_job', (call) => wait(context, args, call)),
	);
}

async function wait(context: ToolContext, args: { jobId: string; waitSeconds?: number }, call: ToolCall): Promise<CallToolResult> {
	const jobId = validateJobId(args.jobId);
	const waitSeconds = boundedWait(args.waitSeconds, context.settings.waitSeconds);
	// The bound counts from the call's start, its records' reads included.
	const deadlineMs = Date.now() + waitSeconds * 1000;
	await ownJob(context, call, jobId);
	const connection = context.connect(call);
	const progress = progressFor(call, waitSeconds);
	try {
		progress.say(`Looking up job ${jobId}`);
		const known = await knownJob(context, connection, jobId, { signal: call.signal, deadlineAtMs: deadlineMs });
		return await waitWithin(context, connection, call, { ...known, deadlineMs, progress });
	} finally {
		progress.stop();
	}
}
