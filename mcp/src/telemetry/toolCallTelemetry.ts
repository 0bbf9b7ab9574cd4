import { propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type TextMapGetter } from '@opentelemetry/api';
import { PROTOCOL_VERSION_META_KEY, TRACEPARENT_META_KEY, type ServerContext } from '@modelcontextprotocol/server';
import packageJson from '../../package.json';
import { metrics, type ToolOutcome } from './metrics';
import {
	ATTR_ERROR_TYPE,
	ATTR_GEN_AI_OPERATION_NAME,
	ATTR_GEN_AI_TOOL_NAME,
	ATTR_MCP_METHOD_NAME,
	ATTR_MCP_PROTOCOL_VERSION,
	ATTR_NETWORK_PROTOCOL_NAME,
	ATTR_NETWORK_TRANSPORT,
} from './semconv';

const tracer = trace.getTracer(packageJson.name, packageJson.version);

/** One tool call as watched: ended once, with how it ended. */
export interface WatchedToolCall {
	end(outcome: ToolOutcome): void;
}

/**
 * A tool call's span (`tools/call <tool>`, kind SERVER, as the MCP conventions name it) and its
 * metrics. Neither records the call's arguments or its result, nor anything of the key: only the
 * tool's name, the protocol version, and how the call ended.
 */
export function watchToolCall(tool: string, ctx: ServerContext): WatchedToolCall {
	const startedMs = performance.now();
	const attributes: Attributes = {
		[ATTR_MCP_METHOD_NAME]: 'tools/call',
		[ATTR_GEN_AI_TOOL_NAME]: tool,
		[ATTR_GEN_AI_OPERATION_NAME]: 'execute_tool',
		[ATTR_NETWORK_TRANSPORT]: ctx.http?.req ? 'tcp' : 'pipe',
	};
	if (ctx.http?.req) attributes[ATTR_NETWORK_PROTOCOL_NAME] = 'http';
	const version = protocolVersion(ctx);
	if (version) attributes[ATTR_MCP_PROTOCOL_VERSION] = version;
	const span = tracer.startSpan(`tools/call ${tool}`, { kind: SpanKind.SERVER, attributes }, parentOf(ctx));
	return {
		end(outcome) {
			metrics.toolCall(tool, outcome, (performance.now() - startedMs) / 1000);
			if (outcome !== 'ok') {
				span.setAttribute(ATTR_ERROR_TYPE, outcome);
				span.setStatus({ code: SpanStatusCode.ERROR, message: outcome === 'cancelled' ? 'cancelled by the client' : 'the result is a tool error' });
			}
			span.end();
		},
	};
}

/**
 * A 2026-07-28 request carries its version in its _meta envelope, a 2025 one over HTTP in a
 * header; over stdio a 2025 one says none. Only a version's shape is kept: the client wrote it.
 */
function protocolVersion(ctx: ServerContext): string | undefined {
	const fromEnvelope = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[PROTOCOL_VERSION_META_KEY];
	const version = typeof fromEnvelope === 'string' ? fromEnvelope : ctx.http?.req?.headers.get('mcp-protocol-version');
	return version && /^\d{4}-\d{2}-\d{2}$/.test(version) ? version : undefined;
}

const fromMeta: TextMapGetter<Record<string, unknown>> = {
	keys: (carrier) => Object.keys(carrier),
	get: (carrier, key) => (typeof carrier[key] === 'string' ? carrier[key] : undefined),
};

const fromHeaders: TextMapGetter<Headers> = {
	keys: (carrier) => {
		const names: string[] = [];
		carrier.forEach((_, name) => names.push(name));
		return names;
	},
	get: (carrier, key) => carrier.get(key) ?? undefined,
};

/** The client's trace context, as the MCP conventions carry it (`traceparent` in the request's _meta), else its HTTP request's headers. */
function parentOf(ctx: ServerContext): Context {
	const meta = ctx.mcpReq._meta as Record<string, unknown> | undefined;
	if (meta && typeof meta[TRACEPARENT_META_KEY] === 'string') return propagation.extract(ROOT_CONTEXT, meta, fromMeta);
	const headers = ctx.http?.req?.headers;
	return headers ? propagation.extract(ROOT_CONTEXT, headers, fromHeaders) : ROOT_CONTEXT;
}
