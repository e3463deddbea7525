/**
 * Tracing with the OpenTelemetry SDK, loaded only when tracing is on (tracing.ts): the gateway's
 * span of each request (SERVER kind, a child of the client's W3C trace context, or a new trace),
 * and the spans instances report on stdout turned into the SDK's finished spans, with their
 * server's name as `service.name`. Both go through one batch processor to an OTLP/HTTP exporter.
 * No global provider or context manager is registered: several engines in one process (tests)
 * each keep their own.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, defaultTextMapGetter } from '@opentelemetry/api';
import type { SpanContext } from '@opentelemetry/api';
import { ExportResultCode, W3CTraceContextPropagator, millisToHrTime } from '@opentelemetry/core';
import type { InstrumentationScope } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { TRACE_SPANS_ENV } from '../../runtime/server/trace-spans.js';
import type { Logger } from '../engine-log.js';
import { firstHeader } from '../../shared/http.js';
import {
  bodyTraceFacts,
  instanceSpanOf,
  spanAttributes,
  spanName,
  type InstanceSpan,
  type SpanFacts,
} from './tracing-spans.js';
import { shownUrl, type RequestSpan, type SpanDeployment, type Tracing, type TracingConfig } from './tracing.js';

/** How long the engine's stop waits for the last spans to leave. */
const CLOSE_MS = 3_000;
/** A failing collector is reported at most this often. */
const WARN_EVERY_MS = 60_000;

export function createOtelTracing(config: TracingConfig, logger: Logger): Tracing {
  const exporter = watched(
    // an export times out after 10 s (OTEL_EXPORTER_OTLP_TIMEOUT of the process says otherwise)
    new OTLPTraceExporter({ url: config.url, headers: config.headers }),
    logger,
  );
  const processor = new BatchSpanProcessor(exporter);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName, 'service.version': config.version }),
    spanProcessors: [processor],
  });
  const tracer = provider.getTracer('mcpctl', config.version);
  const propagator = new W3CTraceContextPropagator();
  const scope: InstrumentationScope = { name: 'mcpctl', version: config.version };
  const resources = new Map<string, Resource>();
  const resourceOf = (deployment: SpanDeployment): Resource => {
    const key = `${deployment.serverName}\n${deployment.environment}`;
    let resource = resources.get(key);
    if (resource === undefined) {
      resource = resourceFromAttributes({
        'service.name': deployment.serverName,
        'deployment.environment.name': deployment.environment,
      });
      resources.set(key, resource);
    }
    return resource;
  };
  logger.info('exporting traces over OTLP/HTTP', { url: shownUrl(config.url), service_name: config.serviceName });
  if (Object.keys(config.headers).length > 0 && sentInClear(config.url))
    logger.warn('OTEL_EXPORTER_OTLP_HEADERS are sent unencrypted over http:// to a host beyond this machine', {
      url: shownUrl(config.url),
    });

  return {
    instanceEnv: { [TRACE_SPANS_ENV]: '1' },
    startRequest(req, info, text, requestId, deployment): RequestSpan {
      const extra = bodyTraceFacts(info.method, text);
      const carrier =
        req.headers.traceparent === undefined && extra?.traceparent !== undefined
          ? { traceparent: extra.traceparent }
          : req.headers;
      const parent = propagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
      const facts: SpanFacts = {
        deploymentId: deployment.id,
        server: deployment.serverName,
        environment: deployment.environment,
        httpMethod: req.method ?? 'GET',
        method: info.method,
        target: info.tool ?? extra?.target,
        rpcId: info.id,
        session: firstHeader(req.headers['mcp-session-id']),
        requestId,
        status: 0,
      };
      const span = tracer.startSpan(spanName(facts), { kind: SpanKind.SERVER }, parent);
      return {
        headers: contextHeaders(span.spanContext()),
        end(status, toolError) {
          if (span.isRecording()) {
            facts.status = status;
            facts.toolError = toolError;
            const { attributes, error } = spanAttributes(facts);
            span.setAttributes(attributes);
            if (error) span.setStatus({ code: SpanStatusCode.ERROR });
          }
          span.end();
        },
      };
    },
    instanceSpan(line, deployment, instance) {
      const span = instanceSpanOf(line, {
        deploymentId: deployment.id,
        server: deployment.serverName,
        environment: deployment.environment,
        instance,
      });
      if (span !== undefined) processor.onEnd(finishedSpan(span, resourceOf(deployment), scope));
    },
    async close() {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, CLOSE_MS);
        timer.unref();
      });
      await Promise.race([provider.shutdown().catch(() => undefined), late]);
      clearTimeout(timer);
    },
  };
}

/** `traceparent` (and `tracestate`) of a span, for the hop to an instance. */
function contextHeaders(context: SpanContext): string[] {
  const flags = (context.traceFlags & 0xff).toString(16).padStart(2, '0');
  const headers = ['traceparent', `00-${context.traceId}-${context.spanId}-${flags}`];
  const state = context.traceState?.serialize();
  if (state !== undefined && state !== '') headers.push('tracestate', state);
  return headers;
}

/** An instance's span as the SDK's finished span, a child of the gateway's. */
function finishedSpan(span: InstanceSpan, resource: Resource, scope: InstrumentationScope): ReadableSpan {
  const { attributes, error } = spanAttributes(span.facts);
  const context: SpanContext = { traceId: span.traceId, spanId: span.spanId, traceFlags: TraceFlags.SAMPLED };
  return {
    name: spanName(span.facts),
    kind: SpanKind.SERVER,
    spanContext: () => context,
    parentSpanContext: { traceId: span.traceId, spanId: span.parentId, traceFlags: TraceFlags.SAMPLED, isRemote: true },
    startTime: millisToHrTime(span.start),
    endTime: millisToHrTime(span.end),
    duration: millisToHrTime(span.end - span.start),
    status: { code: error ? SpanStatusCode.ERROR : SpanStatusCode.UNSET },
    attributes,
    links: [],
    events: [],
    ended: true,
    resource,
    instrumentationScope: scope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

/** The exporter, with failed exports reported in the engine's log (at most once a minute; never its headers). */
function watched(inner: SpanExporter, logger: Logger): SpanExporter {
  let warnedAt = -Infinity;
  return {
    export(spans, done) {
      inner.export(spans, (result) => {
        const now = Date.now();
        if (result.code !== ExportResultCode.SUCCESS && now - warnedAt >= WARN_EVERY_MS) {
          warnedAt = now;
          logger.warn('could not export traces', { spans: spans.length, error: result.error?.message ?? 'failed' });
        }
        done(result);
      });
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
}

/** Plain http:// to a host that is not loopback. */
function sentInClear(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  return protocol === 'http:' && !['localhost', '127.0.0.1', '[::1]', '::1'].includes(hostname);
}
