import { z } from 'zod';
import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import { isTerminal, validateJobId } from '../../../core';
import { viewLink } from '../appView';
import type { ToolContext } from '../context';
import type { ToolCall } from '../toolCall';
import { runTool } from '../toolRun';
import { jobIdShape, jobOutputShape, jobResult } from '../jobResult';
import { ownJob } from '../ownJob';
import { afterSecondsFor, seenAgo } from '../waitWithin';

/** A look this recent answers get_job even with no schedule running: asking again would tell nothing new. */
const FRESH_MS = 5_000;

export function registerGetJob(server: McpServer, context: ToolContext): void {
	server.registerTool(
		'get_job',
		{
			title: 'Get a video job',
			description:
				'Reads an Omni Video job without waiting: its status, and once done its videoUrl and a video/mp4 link; once failed the reason. ' +
				'While the server is watching the job it answers from its latest look (saying how old it is) and spends no request. ' +
				'Use it after generate_video returned a receipt; to wait for the video instead, call wait_for_job.',
			inputSchema: z.object(jobIdShape),
			outputSchema: z.object(jobOutputShape),
			annotations: { title: 'Get a video job', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
			_meta: viewLink,
		},
		(args, ctx) => runTool(context, ctx, 'get_job', (call) => lookUp(context, args.jobId, call)),
	);
}

async function lookUp(context: ToolContext, jobIdArg: string, call: ToolCall): Promise<CallToolResult> {
	const jobId = validateJobId(jobIdArg);
	await ownJob(context, call, jobId);
	const connection = context.connect(call);
	const running = context.watches.running(jobId);
	const seen = await context.watches.lastSeen(connection.fingerprint, jobId);
	const fromRecords = seen && (isTerminal(seen.job) || running !== undefined || Date.now() - seen.seenAtMs < FRESH_MS);
	const job = fromRecords ? seen.job : await connection.client.getJob(jobId, { signal: call.signal });
	const ago = fromRecords ? seenAgo(seen.seenAtMs) : '';
	if (!fromRecords) await context.watches.seen(connection.fingerprint, job).catch(() => undefined);
	void context.spend.observe(connection.fingerprint, job).catch(() => undefined);
	if (job.status === 'done') return jobResult(job, { message: `Video ready (job ${job.id}): ${job.resultUrls[0] ?? 'no URL was given'}.` });
	if (job.status === 'failed') {
		return jobResult(job, { message: `Omni Video job ${job.id} failed: ${job.error ?? 'no reason given'}${job.errorCode ? ` (${job.errorCode})` : ''}. No credits are charged for it. Change what the reason names, then call generate_video with newVideo: true.` });
	}
	const afterSeconds = afterSecondsFor((await running)?.nextLookAtMs(), await context.watches.expectedEndAt(connection.fingerprint, jobId));
	return jobResult(job, {
		nextStep: { tool: 'wait_for_job', arguments: { jobId: job.id }, afterSeconds },
		message: `Job ${job.id} is ${job.rawStatus}${job.progress !== undefined ? ` (${job.progress} %)` : ''}${ago}. Call wait_for_job in about ${afterSeconds} s to wait for it, or get_job again then.`,
	});
}
