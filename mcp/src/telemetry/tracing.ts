import { propagation, trace } from '@opentelemetry/api';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from './semconv';

/** A stop waits this long at most for the spans still held to be sent (a collector that is down holds no deploy). */
const FLUSH_WITHIN_MS = 3_000;

export interface Tracing {
	/** Where spans go, as it may be printed (no credentials, no query); none when tracing is off. */
	readonly where?: string;
	/** Sends the spans still held (within a few seconds), then makes no more. */
	shutdown(): Promise<void>;
}

/**
 * OpenTelemetry traces, on only when an OTLP endpoint is set the standard way
 * (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT; OTEL_SDK_DISABLED=true or
 * OTEL_TRACES_EXPORTER=none turn it off). Off, nothing is registered or even loaded (the SDK and
 * the exporter take some 80 ms to load): the API's tracer is its no-op one, and a tool call's span
 * costs a few calls that do nothing. On, spans go in batches over OTLP/HTTP (JSON bodies); the
 * exporter reads the other OTEL_EXPORTER_OTLP_* settings (headers, timeout) itself, and the
 * OTEL_BSP_* and OTEL_TRACES_SAMPLER settings apply. A client's W3C trace context (`traceparent`
 * in a request's _meta or headers) is the parent of its call's span.
 */
export async function startTracing(env: NodeJS.ProcessEnv, version: string): Promise<Tracing> {
	// The traces' own endpoint is taken as it is; the general one gets the traces' path, as the exporter does.
	const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || (env.OTEL_EXPORTER_OTLP_ENDPOINT && `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`);
	if (!endpoint || env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true' || env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') {
		return { shutdown: async () => undefined };
	}
	const [{ W3CTraceContextPropagator }, { OTLPTraceExporter }, { detectResources, envDetector, resourceFromAttributes }, { BasicTracerProvider, BatchSpanProcessor }] = await Promise.all([
		import('@opentelemetry/core'),
		import('@opentelemetry/exporter-trace-otlp-http'),
		import('@opentelemetry/resources'),
		import('@opentelemetry/sdk-trace-base'),
	]);
	// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, when set, win over the defaults (the merged resource's attributes do).
	const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'omni-video-mcp', [ATTR_SERVICE_VERSION]: version }).merge(detectResources({ detectors: [envDetector] }));
	const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
	trace.setGlobalTracerProvider(provider);
	propagation.setGlobalPropagator(new W3CTraceContextPropagator());
	return {
		where: shown(endpoint),
		shutdown: async () => {
			let timer: NodeJS.Timeout | undefined;
			await Promise.race([provider.shutdown().catch(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, FLUSH_WITHIN_MS)))]);
			clearTimeout(timer);
		},
	};
}

/** The endpoint without what may be secret in it: a user and password, a query. */
function shown(endpoint: string): string {
	try {
		const url = new URL(endpoint);
		return `${url.origin}${url.pathname}`;
	} catch {
		return 'the OTLP endpoint set';
	}
}
