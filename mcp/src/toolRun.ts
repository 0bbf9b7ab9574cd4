import type { CallToolResult, ServerContext } from '@modelcontextprotocol/server';
import { AuthError } from '../../core';
import { legacyCallId } from './cancels';
import type { ToolContext } from './context';
import { watchToolCall } from './telemetry/toolCallTelemetry';
import { callKey, toolCallFrom, type ToolCall } from './toolCall';
import { toolError } from './toolError';

/**
 * Runs one tool call: its ToolCall from the SDK's request, any error as the tool error an agent
 * can act on. A 2025 client's call over HTTP also follows the shared records for a cancellation
 * that another replica heard (see CallCancels); stdio and 2026-07-28 clients cancel on the call's
 * own connection, which the SDK's signal carries. Each call is traced and counted here (see watchToolCall).
 */
export async function runTool(context: ToolContext, ctx: ServerContext, tool: string, body: (call: ToolCall) => Promise<CallToolResult>): Promise<CallToolResult> {
	const startedMs = Date.now();
	const watched = watchToolCall(tool, ctx);
	const sessionId = ctx.mcpReq.envelope === undefined ? ctx.http?.req?.headers.get('mcp-session-id') : undefined;
	let followed: ReturnType<ToolContext['cancels']['follow']> | undefined;
	if (sessionId) {
		try {
			followed = context.cancels.follow(legacyCallId(context.connect(callKey(ctx)).fingerprint, sessionId, ctx.mcpReq.id));
		} catch {
			// No key or base URL: the tool says so itself.
		}
	}
	const running = toolCallFrom(ctx, followed ? [followed.signal] : []);
	let result: CallToolResult;
	try {
		result = await body(running.call);
	} catch (error) {
		if (error instanceof AuthError) context.refused(running.call);
		result = toolError(error);
	} finally {
		// What it left running goes on (a create already sent, the job's looks for other calls).
		if (running.call.signal.aborted) context.say(`omni-video-mcp: a ${tool} call was cancelled by its client after ${((Date.now() - startedMs) / 1000).toFixed(1)} s`);
		running.end();
		followed?.end();
	}
	// The call's signal no longer follows the SDK's (running.end()): aborted now means cancelled while it ran.
	watched.end(running.call.signal.aborted ? 'cancelled' : result.isError ? 'tool_error' : 'ok');
	return result;
}
