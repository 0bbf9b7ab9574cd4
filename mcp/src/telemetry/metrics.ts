import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { keysHeld } from '../../../core';

/** How a tool call ended: its result, a tool error (isError), or its client's cancellation. */
export type ToolOutcome = 'ok' | 'tool_error' | 'cancelled';

/** How a request to the service's API ended: the answer's status class (429 apart), or no answer. */
export type ApiOutcome = '2xx' | '3xx' | '4xx' | '429' | '5xx' | 'transport_error' | 'cancelled';

/** The outcome of an answered request: its status class, a 429 apart (a limit met, not a mistake). */
export function apiOutcome(status: number): ApiOutcome {
	if (status === 429) return '429';
	if (status >= 500) return '5xx';
	if (status >= 400) return '4xx';
	return status >= 300 ? '3xx' : '2xx';
}

/** A read of one record, or a step by its name (a bounded set: the steps the server has). */
export type StoreOperation = string;

/**
 * The OpenTelemetry MCP conventions' bucket boundaries for mcp.server.operation.duration (seconds),
 * used for both tool-call histograms: a call lasts from milliseconds (a bad argument) to its wait's
 * bound (45 s by default, up to 600).
 */
const TOOL_CALL_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600];
/** A step on the records: well under a millisecond in memory, a few on a folder or Redis, seconds when Redis is away. */
const STORE_STEP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/**
 * What one server process counts for Prometheus, on a registry of its own (never prom-client's
 * global one, which anything else loaded in the process could write to). Labels are names from a
 * short fixed list (tools, outcomes, operations): never a job id, a key, a fingerprint or a prompt.
 */
export class ServerMetrics {
	readonly registry = new Registry();
	private processMetrics = false;
	/** Reads the plan's places in use at each scrape (see placesInUse). */
	private readPlaces: (() => Promise<number>) | undefined;

	private readonly toolCalls = new Counter({
		name: 'omni_video_mcp_tool_calls_total',
		help: 'Tool calls answered, by tool and outcome (ok, tool_error, cancelled).',
		labelNames: ['tool', 'outcome'] as const,
		registers: [this.registry],
	});

	private readonly toolCallSeconds = new Histogram({
		name: 'omni_video_mcp_tool_call_duration_seconds',
		help: 'How long tool calls took, by tool, in seconds.',
		labelNames: ['tool'] as const,
		buckets: TOOL_CALL_BUCKETS,
		registers: [this.registry],
	});

	/** The OpenTelemetry MCP conventions' mcp.server.operation.duration, as Prometheus names it. */
	private readonly operationSeconds = new Histogram({
		name: 'mcp_server_operation_duration_seconds',
		help: 'MCP requests served, in seconds (OpenTelemetry mcp.server.operation.duration): tools/call by gen_ai_tool_name, error_type when it failed.',
		labelNames: ['mcp_method_name', 'gen_ai_tool_name', 'error_type'] as const,
		buckets: TOOL_CALL_BUCKETS,
		registers: [this.registry],
	});

	private readonly apiRequests = new Counter({
		name: 'omni_video_mcp_api_requests_total',
		help: "Requests to the Omni Video API, by outcome: the answer's status class (2xx, 3xx, 4xx, 429, 5xx), transport_error, or cancelled.",
		labelNames: ['outcome'] as const,
		registers: [this.registry],
	});

	private readonly rateLimited = new Counter({
		name: 'omni_video_mcp_api_rate_limited_total',
		help: 'Answers of 429 (rate or concurrency limit) from the Omni Video API.',
		registers: [this.registry],
	});

	private readonly storeSeconds = new Histogram({
		name: 'omni_video_mcp_store_step_duration_seconds',
		help: 'Steps on the records (memory, folder or Redis), by operation (a read, or the step by its name), in seconds, failed ones included.',
		labelNames: ['operation'] as const,
		buckets: STORE_STEP_BUCKETS,
		registers: [this.registry],
	});

	private readonly storeFailures = new Counter({
		name: 'omni_video_mcp_store_step_failures_total',
		help: 'Steps on the records that failed (Redis unreachable, a folder lock never freed), by operation.',
		labelNames: ['operation'] as const,
		registers: [this.registry],
	});

	private readonly places = new Gauge({
		name: 'omni_video_mcp_plan_places_in_use',
		help: "Jobs at once held on the plans of the keys this process has served, by every process on those keys (the plan's records), at the scrape.",
		registers: [this.registry],
		collect: async () => {
			const value = await this.readPlaces?.().catch(() => undefined);
			if (value !== undefined) this.places.set(value);
		},
	});

	private readonly keys: Gauge = new Gauge({
		name: 'omni_video_mcp_keys_held',
		help: 'API keys this process keeps pacing and learned render times for (keys the service refused are let go of), at the scrape.',
		registers: [this.registry],
		collect: (): void => this.keys.set(keysHeld()),
	});

	private readonly signInRefusals = new Counter({
		name: 'omni_video_mcp_sign_in_refusals_total',
		help: 'Sign-in tries and registrations refused, by reason: wrong_code, wrong_key, member_locked, address_locked, key_checks_address, key_checks_all, registrations_address.',
		labelNames: ['reason'] as const,
		registers: [this.registry],
	});

	private readonly signInEvents = new Counter({
		name: 'omni_video_mcp_sign_in_events_total',
		help: 'What happened at sign-in, by event: sign_in (the page), grant (a code exchanged), refresh, refresh_reuse (a used refresh token again: its grant ended), revocation.',
		labelNames: ['event'] as const,
		registers: [this.registry],
	});

	signInRefused(reason: string): void {
		this.signInRefusals.inc({ reason });
	}

	signInEvent(event: 'sign_in' | 'grant' | 'refresh' | 'refresh_reuse' | 'revocation'): void {
		this.signInEvents.inc({ event });
	}

	toolCall(tool: string, outcome: ToolOutcome, seconds: number): void {
		this.toolCalls.inc({ tool, outcome });
		this.toolCallSeconds.observe({ tool }, seconds);
		const labels = { mcp_method_name: 'tools/call', gen_ai_tool_name: tool };
		this.operationSeconds.observe(outcome === 'ok' ? labels : { ...labels, error_type: outcome }, seconds);
	}

	apiRequest(outcome: ApiOutcome): void {
		this.apiRequests.inc({ outcome });
		if (outcome === '429') this.rateLimited.inc();
	}

	storeStep(operation: StoreOperation, seconds: number, failed: boolean): void {
		this.storeSeconds.observe({ operation }, seconds);
		if (failed) this.storeFailures.inc({ operation });
	}

	/**
	 * Where the plan's places in use are read at each scrape (prom-client awaits the gauge's
	 * collect); a read that fails leaves the last value.
	 */
	placesInUse(read: () => Promise<number>): void {
		this.readPlaces = read;
	}

	/**
	 * Node's process metrics (CPU, memory, event loop lag, GC, handles) on this registry: only where
	 * they are scraped (HTTP), since the event-loop and GC observers run from the moment they start.
	 */
	withProcessMetrics(): void {
		if (this.processMetrics) return;
		this.processMetrics = true;
		collectDefaultMetrics({ register: this.registry });
	}

	/** The text a Prometheus scrape gets, and its content type. */
	async scrape(): Promise<{ text: string; contentType: string }> {
		return { text: await this.registry.metrics(), contentType: this.registry.contentType };
	}
}

/**
 * The process's one set: every tool call, API request and records step of the process is counted
 * here, wherever in the process it runs (core's transport and the store are made far from the
 * HTTP server that shows them), as a Prometheus scrape sees one process.
 */
export const metrics = new ServerMetrics();
