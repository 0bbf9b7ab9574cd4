import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { CLIENT_CAPABILITIES_META_KEY, type CallToolResult, type ClientCapabilities, type ListToolsResult, type McpServer, type RegisteredTool, type ServerContext } from '@modelcontextprotocol/server';
import { validateJobId } from '../../core';
import type { ToolContext } from './context';
import type { ToolCall } from './toolCall';
import { runTool } from './toolRun';
import { jobIdShape } from './jobResult';
import { knownJob } from './knownJob';
import { boundedWait } from './settings';
import { ownJob } from './ownJob';
import { waitWithin } from './waitWithin';

/**
 * The extension's names, as @modelcontextprotocol/ext-apps/server spells them: that module is ESM
 * behind package exports, which this CommonJS build cannot import, and its helpers only set these.
 */
export const UI_EXTENSION = 'io.modelcontextprotocol/ui';
export const VIEW_MIME_TYPE = 'text/html;profile=mcp-app';

/** The job view: one HTML document the host renders in the conversation (MCP Apps, `io.modelcontextprotocol/ui`). */
export const VIEW_URI = 'ui://omni-video/job-view.html';
/** The tool the view follows its job with; the model never sees it. */
export const VIEW_TOOL = 'follow_job';
/**
 * How long one of the view's calls waits on the job's schedule: well inside the 60 s a host lets a
 * call run, and short enough that a view closed mid-call leaves nothing waiting for long.
 */
export const VIEW_WAIT_SECONDS = 20;
/** The built view, beside the bin (dist/cli.js) or, run from the sources, in the package's dist. */
const VIEW_FILES = [join(__dirname, 'job-view.html'), join(__dirname, '..', 'dist', 'job-view.html')];
/** Where the view's declared video origins go in the built HTML. */
const ORIGINS_MARK = '"__VIDEO_ORIGINS__"';

/** What a tool says to hosts that render views: which view shows its result (MCP Apps, and ChatGPT's older names). */
export const viewLink = { ui: { resourceUri: VIEW_URI }, 'ui/resourceUri': VIEW_URI, 'openai/outputTemplate': VIEW_URI, 'openai/widgetAccessible': true };

/** Whether the client renders MCP Apps views (it advertised the extension with its HTML profile). */
export function rendersViews(capabilities: ClientCapabilities | null | undefined): boolean {
	const ui = capabilities?.extensions?.[UI_EXTENSION] as { mimeTypes?: unknown } | undefined;
	return Array.isArray(ui?.mimeTypes) && ui.mimeTypes.includes(VIEW_MIME_TYPE);
}

let built: string | undefined;

/** The view's HTML as built (npm run build), with the origins it may load videos from written in. */
export function viewHtml(videoOrigins: string[]): string {
	if (built === undefined) {
		const file = VIEW_FILES.find((path) => existsSync(path));
		if (file === undefined) throw new Error('The job view is not built: run npm run build in mcp/.');
		built = readFileSync(file, 'utf8');
	}
	// JSON inside a script: a "<" could end the script early.
	const origins = JSON.stringify(videoOrigins).replace(/</g, '\\u003c');
	return built.replace(ORIGINS_MARK, () => origins);
}

/** The view's sandbox origin: the operator's, else Claude's for this server's public address, else the host's own choice. */
function viewDomain(context: ToolContext): string | undefined {
	if (context.settings.viewDomain) return context.settings.viewDomain;
	const { publicUrl } = context.settings;
	return publicUrl === undefined ? undefined : `${createHash('sha256').update(`${publicUrl}/mcp`).digest('hex').slice(0, 32)}.claudemcpcontent.com`;
}

/**
 * The job view and the tool it follows its job with. The extension is declared in the server's
 * capabilities; the view's tool is listed only to clients that render views (`listed`), since the
 * others would show it to the model. What the view loads is exactly the video origins.
 */
export function registerJobView(server: McpServer, context: ToolContext, listed: () => boolean): void {
	server.server.registerCapabilities({ extensions: { [UI_EXTENSION]: {} } });
	const origins = context.settings.videoOrigins;
	const domain = viewDomain(context);
	const ui = { csp: { resourceDomains: origins, connectDomains: [] }, prefersBorder: true, ...(domain ? { domain } : {}) };
	const openai = {
		'openai/widgetCSP': { resource_domains: origins, connect_domains: [] },
		'openai/widgetDescription': 'Shows the Omni Video job: its progress while it renders, then the video, playable and downloadable.',
		'openai/widgetPrefersBorder': true,
		...(context.settings.publicUrl ? { 'openai/widgetDomain': context.settings.viewDomain ?? new URL(context.settings.publicUrl).origin } : {}),
	};
	server.registerResource('Omni Video job', VIEW_URI, { title: 'Omni Video job', description: 'A video job as it renders, then its video.', mimeType: VIEW_MIME_TYPE, _meta: { ui, ...openai } }, () => ({
		contents: [{ uri: VIEW_URI, mimeType: VIEW_MIME_TYPE, text: viewHtml(origins), _meta: { ui, ...openai } }],
	}));
	const tool = server.registerTool(
		VIEW_TOOL,
		{
			title: 'Follow a video job (view)',
			description: `For the job view only: waits up to ${VIEW_WAIT_SECONDS} s on the job's shared look schedule and answers with the job as last seen, its expected end and, once done, its video.`,
			inputSchema: z.object({ ...jobIdShape, waitSeconds: z.number().optional().describe(`How long to wait for the job's next look, 0 to ${VIEW_WAIT_SECONDS} s (the default).`) }),
			annotations: { title: 'Follow a video job (view)', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
			_meta: { ui: { resourceUri: VIEW_URI, visibility: ['app'] }, 'ui/resourceUri': VIEW_URI, 'openai/widgetAccessible': true, 'openai/visibility': 'private' },
		},
		(args, ctx) => runTool(context, ctx, VIEW_TOOL, (call) => follow(context, args.jobId, Math.min(VIEW_WAIT_SECONDS, boundedWait(args.waitSeconds, VIEW_WAIT_SECONDS)), call)),
	);
	listedFor(server, tool, listed);
}

type ListHandler = (request: unknown, ctx: ServerContext) => Promise<unknown>;

/**
 * Lists the view's tool only to clients that render views, and only while a tools/list is answered
 * (the SDK filters the list on `enabled`, read at once): a 2026-07-28 request carries its client's
 * capabilities, a 2025 client gave them at its initialize (`listed`). Called by name, the tool
 * answers anyone: it is a short read-only wait on the job's shared looks, like wait_for_job.
 */
function listedFor(server: McpServer, tool: RegisteredTool, listed: () => boolean): void {
	let listing: boolean | undefined;
	// The SDK's own tools/list handler, wrapped; read through its protected accessor, for want of a public one.
	const original = (server.server as unknown as { _getRequestHandler?(method: string): ListHandler | undefined })._getRequestHandler?.('tools/list');
	if (original === undefined) {
		Object.defineProperty(tool, 'enabled', { get: listed, set: () => undefined, configurable: true });
		return;
	}
	Object.defineProperty(tool, 'enabled', { get: () => listing ?? true, set: () => undefined, configurable: true });
	server.server.setRequestHandler('tools/list', (request, ctx) => {
		listing = listed() || rendersViews((ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined);
		try {
			return original(request, ctx) as ReturnType<ListHandler> as Promise<ListToolsResult>;
		} finally {
			listing = undefined;
		}
	});
}

/**
 * One of the view's calls: the job as the records have it, then the job's one look schedule
 * (JobWatches, as wait_for_job joins it) for a short while. It spends no request wait_for_job
 * would not: a job ended or heard by callback is answered from the records.
 */
async function follow(context: ToolContext, jobIdArg: string, waitSeconds: number, call: ToolCall): Promise<CallToolResult> {
	const jobId = validateJobId(jobIdArg);
	// A team member's view shows only their own jobs (see ownJob).
	await ownJob(context, call, jobId);
	const connection = context.connect(call);
	const deadlineMs = Date.now() + waitSeconds * 1000;
	const known = await knownJob(context, connection, jobId, { signal: call.signal, deadlineAtMs: deadlineMs });
	const result = await waitWithin(context, connection, call, { ...known, deadlineMs, progress: { say: () => undefined, stop: () => undefined } });
	const { createdAtMs, expectedEndAtMs } = await context.watches.times(connection.fingerprint, jobId).catch(() => ({ createdAtMs: undefined, expectedEndAtMs: undefined }));
	const videoUrl = (result.structuredContent as { videoUrl?: string | null } | undefined)?.videoUrl;
	if (videoUrl && !context.settings.videoOrigins.includes(originOf(videoUrl))) {
		context.say(`omni-video-mcp: job ${jobId}'s video is served from ${originOf(videoUrl)}, which the job view does not declare: the view links to it instead of playing it. Add it with --video-origin (OMNI_VIDEO_VIDEO_ORIGINS).`);
	}
	return { ...result, structuredContent: { ...(result.structuredContent ?? {}), ...times(expectedEndAtMs, createdAtMs) } };
}

/**
 * The job's expected end, and how far away it is and how long the render takes in seconds: the
 * view counts from its own clock, which need not agree with this server's or the service's.
 */
function times(expectedEndAtMs: number | undefined, createdAtMs: number | undefined): Record<string, unknown> {
	if (expectedEndAtMs === undefined) return {};
	return {
		expectedEndAt: new Date(expectedEndAtMs).toISOString(),
		expectedInSeconds: Math.round((expectedEndAtMs - Date.now()) / 100) / 10,
		...(createdAtMs !== undefined ? { renderSeconds: Math.round((expectedEndAtMs - createdAtMs) / 100) / 10 } : {}),
	};
}

function originOf(url: string): string {
	try {
		return new URL(url).origin;
	} catch {
		return url;
	}
}
