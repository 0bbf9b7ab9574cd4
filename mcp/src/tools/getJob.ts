import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { validateJobId } from '../../../core';
import { lookAgainSeconds, type ToolContext, type ToolExtra } from '../context';
import { jobIdShape, jobOutputShape, jobResult } from '../jobResult';
import { toolError } from '../toolError';

export function registerGetJob(server: McpServer, context: ToolContext): void {
	server.registerTool(
		'get_job',
		{
			title: 'Get a video job',
			description:
				'Reads an Omni Video job as it is now, with one request and no waiting: its status, and once done its videoUrl and a video/mp4 link; once failed the reason. ' +
				'Use it after generate_video returned a receipt; to wait for the video instead, call wait_for_job.',
			inputSchema: jobIdShape,
			outputSchema: jobOutputShape,
			annotations: { title: 'Get a video job', readOnlyHint: true, idempotentHint: true, openWorldHint: true },
		},
		(args, extra) => lookUp(context, args.jobId, extra).catch(toolError),
	);
}

async function lookUp(context: ToolContext, jobIdArg: string, extra: ToolExtra): Promise<CallToolResult> {
	const jobId = validateJobId(jobIdArg);
	const connection = context.connect(extra);
	const job = await connection.client.getJob(jobId, { signal: extra.signal });
	context.spend.observe(connection.fingerprint, job);
	context.lastSeen.set(job.id, job);
	if (job.status === 'done') return jobResult(job, { message: `Video ready (job ${job.id}): ${job.resultUrls[0] ?? 'no URL was given'}.` });
	if (job.status === 'failed') {
		return jobResult(job, { message: `Omni Video job ${job.id} failed: ${job.error ?? 'no reason given'}${job.errorCode ? ` (${job.errorCode})` : ''}. No credits are charged for it. Change what the reason names, then call generate_video with newVideo: true.` });
	}
	const afterSeconds = lookAgainSeconds(context, job.id);
	return jobResult(job, {
		nextStep: { tool: 'get_job', arguments: { jobId: job.id }, afterSeconds },
		message: `Job ${job.id} is ${job.rawStatus}${job.progress !== undefined ? ` (${job.progress} %)` : ''}. Look again with get_job in about ${afterSeconds} s, or call wait_for_job to wait for it.`,
	});
}
