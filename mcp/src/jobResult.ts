import { z } from 'zod';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { jobView, type JobRecord } from '../../core';

/** What the agent is told to call next, and when. */
export interface NextStep {
	tool: string;
	arguments: Record<string, unknown>;
	afterSeconds: number;
}

/** The argument naming a job, as get_job and wait_for_job take it. */
export const jobIdShape = { jobId: z.string().describe('The jobId a generate_video result gave, such as job_abc123.') };

/** The shape every job-returning tool answers with (its output schema). */
export const jobOutputShape = {
	status: z.enum(['queued', 'running', 'done', 'failed', 'waiting_for_place']).describe('done: videoUrl is ready. failed: see error. queued/running: call nextStep.tool later. waiting_for_place: not created yet, call generate_video again as nextStep says.'),
	jobId: z.string().nullable().describe('The Omni Video job id; null only while waiting_for_place.'),
	videoUrl: z.string().nullable().describe('The MP4 to show or download (no key needed); null until done.'),
	resultUrls: z.array(z.string()).describe('Every output file of the job.'),
	progress: z.number().optional().describe('0-100, when the service reports it.'),
	creditsQueued: z.number().optional().describe('Credits reserved for the job.'),
	creditsUsed: z.number().optional().describe('Credits charged (a failed job is charged nothing).'),
	createdAt: z.string().optional(),
	completedAt: z.string().optional(),
	error: z.string().optional().describe("The service's reason a job failed."),
	errorCode: z.string().optional(),
	retried: z.boolean().optional().describe('True when this call was a retry of an earlier one and got its job back instead of making another.'),
	requestId: z.string().optional().describe('Pass this as requestId with the same arguments to pick up this request again.'),
	nextStep: z
		.object({ tool: z.string(), arguments: z.record(z.string(), z.unknown()), afterSeconds: z.number() })
		.optional()
		.describe('Present when the video is not ready: which tool to call, with what, and after how many seconds.'),
	message: z.string().describe('What happened and what to do next, in words.'),
};

export type JobOutput = z.infer<z.ZodObject<typeof jobOutputShape>>;

/** A job as the tools answer it: its view, the video as links (never inline), and what to do next. */
export function jobResult(job: JobRecord, extra: { retried?: boolean; requestId?: string; nextStep?: NextStep; message: string }): CallToolResult {
	const view = jobView(job);
	const output: JobOutput = {
		status: job.status,
		jobId: job.id,
		videoUrl: view.videoUrl,
		resultUrls: view.resultUrls,
		...pick(view),
		...(extra.retried ? { retried: true } : {}),
		...(extra.requestId ? { requestId: extra.requestId } : {}),
		...(extra.nextStep ? { nextStep: extra.nextStep } : {}),
		message: extra.message,
	};
	const links: CallToolResult['content'] = job.resultUrls.map((uri, i) => ({
		type: 'resource_link',
		uri,
		name: job.resultUrls.length > 1 ? `omni-video-${job.id}-${i + 1}.mp4` : `omni-video-${job.id}.mp4`,
		mimeType: 'video/mp4',
		description: `Video of Omni Video job ${job.id}`,
	}));
	return {
		content: [{ type: 'text', text: `${extra.message}\n${JSON.stringify(output)}` }, ...links],
		structuredContent: output,
		...(job.status === 'failed' ? { isError: true } : {}),
	};
}

/** A create still waiting for a place among the plan's jobs at once: nothing made or charged yet. */
export function waitingForPlaceResult(args: Record<string, unknown>, requestId: string | undefined, waitedSeconds: number): CallToolResult {
	// newVideo asked again would make yet another video: the request's id picks this one up instead.
	const { newVideo: _newVideo, ...rest } = args;
	const again = { ...rest, ...(requestId ? { requestId } : {}) };
	const output: JobOutput = {
		status: 'waiting_for_place',
		jobId: null,
		videoUrl: null,
		resultUrls: [],
		...(requestId ? { requestId } : {}),
		nextStep: { tool: 'generate_video', arguments: again, afterSeconds: 15 },
		message:
			`Not created yet: every job the plan runs at once is busy, so this request waits its turn on the server (${Math.round(waitedSeconds)} s so far). ` +
			'Call generate_video again with nextStep.arguments in about 15 s: it picks this request up and makes no second video.',
	};
	return { content: [{ type: 'text', text: `${output.message}\n${JSON.stringify(output)}` }], structuredContent: output };
}

function pick(view: ReturnType<typeof jobView>): Partial<JobOutput> {
	const out: Partial<JobOutput> = {};
	for (const key of ['progress', 'creditsQueued', 'creditsUsed', 'createdAt', 'completedAt', 'error', 'errorCode'] as const) {
		if (view[key] !== undefined) Object.assign(out, { [key]: view[key] });
	}
	return out;
}
