/**
 * The OpenTelemetry semantic conventions' names this server's spans use (semantic conventions
 * 1.45: the MCP and GenAI ones are still incubating). Written here rather than taken from
 * @opentelemetry/semantic-conventions: its incubating entry point may change in any minor
 * release, as it warns, and its stable one is a large module to load at every start for five strings.
 */
export const ATTR_SERVICE_NAME = 'service.name';
export const ATTR_SERVICE_VERSION = 'service.version';
export const ATTR_ERROR_TYPE = 'error.type';
export const ATTR_NETWORK_TRANSPORT = 'network.transport';
export const ATTR_NETWORK_PROTOCOL_NAME = 'network.protocol.name';
export const ATTR_MCP_METHOD_NAME = 'mcp.method.name';
export const ATTR_MCP_PROTOCOL_VERSION = 'mcp.protocol.version';
export const ATTR_GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
export const ATTR_GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
