import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { createToolContext } from '../context';
import { startHttpServer } from './httpServer';
import { membersCommand } from './membersCommand';
import { createServer } from '../server';
import { readSettings, SettingsError } from '../settings';
import { openStore } from './openStore';
import { measuredStore } from '../telemetry/measuredStore';
import { startTracing } from '../telemetry/tracing';
import packageJson from '../../package.json';

const USAGE = `omni-video-mcp: Omni Video's MCP server (docs/mcp.md)
  omni-video-mcp                     stdio, for Claude Desktop, Cursor, VS Code
  omni-video-mcp --http [--port N]   Streamable HTTP at http://127.0.0.1:N/mcp (default 3333)
Options: --host H, --allow-origin O, --wait-seconds S, --allow-dir D, --state-dir D|none,
  --redis URL (records in Redis, for replicas behind a proxy: docs/mcp.md#running-it-for-a-team),
  --redis-cluster (the --redis URL is a node of a Redis Cluster),
  --public-url URL (with --http: the address people, apps and the service's callbacks reach it at;
    apps such as Claude.ai and ChatGPT then sign in: docs/mcp.md#claudeai-and-chatgpt),
  --sign-in own-key|team|off (with --public-url: people sign in with their own key, the default,
    or as members of the team's key; off takes API keys as bearer tokens only)
  --video-origin O (repeatable: the origins the service serves videos from, all the job view may load),
  --view-domain D (the job view's sandbox origin, when a host asks for one of its own)
  omni-video-mcp members add|list|cap|remove ...   the team's members (omni-video-mcp members --help)
Environment: OMNI_VIDEO_API_KEY, OMNI_VIDEO_BASE_URL, OMNI_VIDEO_PLAN (pro|premium),
  OMNI_VIDEO_SPEND_CAP_CREDITS, OMNI_VIDEO_SPEND_CAP_HOURS, OMNI_VIDEO_MCP_WAIT_SECONDS,
  OMNI_VIDEO_MCP_RETRY_WINDOW_MINUTES, OMNI_VIDEO_MCP_ALLOWED_DIRS, OMNI_VIDEO_MCP_STATE_DIR,
  OMNI_VIDEO_MCP_REDIS_URL, OMNI_VIDEO_MCP_REDIS_CLUSTER=1, OMNI_VIDEO_MCP_PUBLIC_URL, OMNI_VIDEO_WEBHOOK_SECRET,
  OMNI_VIDEO_EXPECTED_RENDER_SECONDS, OMNI_VIDEO_VIDEO_ORIGINS, OMNI_VIDEO_MCP_VIEW_DOMAIN,
  OMNI_VIDEO_MCP_OPENAI_CHALLENGE (ChatGPT's domain check), OMNI_VIDEO_MCP_SIGN_IN, OMNI_VIDEO_MCP_SECRET (sign-in's,
  the same on every replica); OTEL_EXPORTER_OTLP_ENDPOINT (traces, OpenTelemetry)
With --http, for operators: /healthz, /readyz, /metrics (Prometheus)`;

/** Everything the server says goes to stderr: over stdio, stdout carries the protocol alone. */
function say(line: string): void {
	process.stderr.write(`${line}\n`);
}

async function main(): Promise<void> {
	const argv = process.argv.slice(2);
	if (argv[0] === 'members') return membersCommand(argv.slice(1), process.env, (line) => process.stdout.write(`${line}\n`));
	if (argv.includes('--help')) return say(USAGE);
	const settings = readSettings(argv, process.env);
	const tracing = await startTracing(process.env, packageJson.version);
	const store = measuredStore(await openStore(settings.state, say));
	const context = createToolContext(settings, store, say);
	say(`omni-video-mcp: records (which call made which job, spend, pacing) in ${store.where}`);
	if (tracing.where) say(`omni-video-mcp: traces to ${tracing.where} (OpenTelemetry, OTLP/HTTP)`);
	if (settings.baseUrl === '') say('omni-video-mcp: OMNI_VIDEO_BASE_URL is not set; every tool call will say so until it is.');
	if (settings.transport === 'http') {
		const running = await startHttpServer(context, store);
		say(`omni-video-mcp: Streamable HTTP on ${running.url}`);
		if (settings.signIn) say(`omni-video-mcp: sign-in on (${settings.signIn.way === 'team' ? "members of the team's key" : 'people with their own key'}): add ${settings.publicUrl}/mcp as a connector in Claude.ai or ChatGPT`);
		const stop = () => void running.close().then(() => tracing.shutdown()).then(() => process.exit(0));
		process.once('SIGINT', stop);
		process.once('SIGTERM', stop);
		return;
	}
	// 2026-07-28 clients and 2025 ones (which initialize first) alike.
	serveStdio(() => createServer(context), { legacy: 'serve' });
	if (tracing.where) {
		// The spans still held are sent when the client closes stdin (the process then ends by itself) or stops it.
		process.once('beforeExit', () => void tracing.shutdown());
		const stop = () => void tracing.shutdown().then(() => process.exit(0));
		process.once('SIGINT', stop);
		process.once('SIGTERM', stop);
	}
}

main().catch((error: unknown) => {
	say(error instanceof SettingsError ? `omni-video-mcp: ${error.message}` : `omni-video-mcp: ${error instanceof Error ? error.message : String(error)}`);
	process.exit(error instanceof SettingsError ? 2 : 1);
});
