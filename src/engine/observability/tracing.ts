/**
 * OpenTelemetry traces of the engine's deployments, off unless an OTLP endpoint is set
 * (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, in the engine's environment
 * or its settings file). This module is what the gateway and the deployments see: the settings,
 * the seam, and the trace headers of the hop to an instance. The SDK and the exporter
 * (tracing-otel.ts) are loaded only when tracing is on, so an engine without it loads none of
 * OpenTelemetry and its gateway does nothing more per request than look at one field.
 */
import type { IncomingMessage } from 'node:http';
import { readSettingsFile } from '../../shared/settings-file.js';
import { SETTINGS, SettingError, settingValue, type SettingsFile } from '../../shared/settings.js';
import { EngineConfigError } from '../engine-errors.js';
import type { Logger } from '../engine-log.js';
import type { McpRequestInfo } from '../gateway/mcp-messages.js';
import { ENGINE_OWNER, type SecretRegistry } from '../secret-registry.js';

/** Where spans go and what the engine's own spans are called. */
export interface TracingConfig {
  /** the OTLP/HTTP traces URL (`…/v1/traces`) */
  url: string;
  /** sent with every export: may hold credentials, never logged */
  headers: Record<string, string>;
  /** `service.name` of the gateway's spans (an instance's spans carry its server's name) */
  serviceName: string;
  version: string;
}

/** What names a deployment in its spans (a LiveDeployment is one). */
export interface SpanDeployment {
  readonly id: string;
  readonly serverName: string;
  readonly environment: string;
}

/** The gateway's span of one request, from its arrival to the end of its answer. */
export interface RequestSpan {
  /** what the instance's request carries instead of the client's: `traceparent` (and `tracestate`), as name, value */
  readonly headers: readonly string[];
  end(status: number, toolError: boolean | undefined): void;
}

/** Tracing as the gateway and the deployments use it; present only when it is on. */
export interface Tracing {
  /** what an instance's environment gets so it writes its spans (src/runtime/server/trace-spans.ts) */
  readonly instanceEnv: Readonly<Record<string, string>>;
  /**
   * The span of a request the gateway passes on: a child of the client's `traceparent` (the header,
   * else `params._meta.traceparent` of `text`), else the root of a new trace.
   */
  startRequest(
    req: IncomingMessage,
    info: McpRequestInfo,
    text: string,
    requestId: string,
    deployment: SpanDeployment,
  ): RequestSpan;
  /** exports the span of an instance's `span` line (one that does not check out is dropped) */
  instanceSpan(line: Record<string, unknown>, deployment: SpanDeployment, instance: string): void;
  /** exports what is left (bounded) and stops */
  close(): Promise<void>;
}

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * The engine's tracing when its settings ask for it, else undefined (nothing of OpenTelemetry
 * loaded). A wrong setting stops the engine's start with a message naming it; header values are
 * hidden from every log line from now on.
 */
export async function startTracing(deps: {
  env: Record<string, string | undefined>;
  settingsFile: string;
  version: string;
  logger: Logger;
  secrets: SecretRegistry;
}): Promise<Tracing | undefined> {
  const config = tracingConfig(deps.env, await readSettingsFile(deps.settingsFile), deps.version);
  if (config === undefined) return undefined;
  deps.secrets.add(ENGINE_OWNER, Object.values(config.headers));
  const { createOtelTracing } = await import('./tracing-otel.js');
  return createOtelTracing(config, deps.logger);
}

/** The settings of tracing; undefined when no endpoint is set. Throws EngineConfigError naming a wrong one. */
export function tracingConfig(
  env: Record<string, string | undefined>,
  file: SettingsFile | undefined,
  version: string,
): TracingConfig | undefined {
  const sources = { env, file };
  try {
    const specific = settingValue(SETTINGS.otelTracesEndpoint, sources);
    const general = settingValue(SETTINGS.otelEndpoint, sources);
    const url = specific ?? (general === undefined ? undefined : `${general.replace(/\/+$/, '')}/v1/traces`);
    if (url === undefined) return undefined;
    const serviceName = settingValue(SETTINGS.otelServiceName, sources);
    return { url, headers: parseHeaders(env, file), serviceName, version };
  } catch (error) {
    if (error instanceof SettingError) throw new EngineConfigError(error.message);
    throw error;
  }
}

/**
 * `name=value` pairs separated by commas, values percent-encoded (the OpenTelemetry format). A
 * wrong one is named by its position, never quoted: the values are credentials.
 */
function parseHeaders(env: Record<string, string | undefined>, file: SettingsFile | undefined): Record<string, string> {
  // the parser's message would quote the value
  const wrong = () => new SettingError(`${SETTINGS.otelHeaders.env} must be a text of name=value pairs`);
  const raw = settingValue(SETTINGS.otelHeaders, { env, file }, wrong);
  const headers: Record<string, string> = {};
  if (raw === undefined) return headers;
  const pairs = raw.split(',');
  pairs.forEach((pair, at) => {
    if (pair.trim() === '') return;
    const equals = pair.indexOf('=');
    const name = equals === -1 ? '' : pair.slice(0, equals).trim();
    let value: string | undefined;
    try {
      value = decodeURIComponent(pair.slice(equals + 1).trim());
    } catch {
      value = undefined;
    }
    if (!HEADER_NAME.test(name) || value === undefined || /[\r\n\0]/.test(value))
      throw new SettingError(
        `${SETTINGS.otelHeaders.env} must be name=value pairs separated by commas (values percent-encoded); pair ${at + 1} is not`,
      );
    headers[name.toLowerCase()] = value;
  });
  return headers;
}

/**
 * The headers of the hop to an instance with the gateway's span as the trace context: the client's
 * `traceparent` and `tracestate` give way to the span's. Without a span they pass as they came.
 */
export function withTraceContext(headers: string[], span: RequestSpan | undefined): string[] {
  if (span === undefined) return headers;
  const out: string[] = [];
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!;
    if (name === 'traceparent' || name === 'tracestate') continue;
    out.push(name, headers[i + 1]!);
  }
  out.push(...span.headers);
  return out;
}

/** The URL as a log line may show it: no user, password or query. */
export function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '(not a URL)';
  }
}
