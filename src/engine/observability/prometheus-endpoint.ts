/**
 * Where Prometheus scrapes the engine: GET /metrics on the engine's own listeners (the pipeline's
 * `metrics` step) and, with MCPCTL_METRICS_ADDRESS, on an address of its own that answers nothing
 * else. Either way a request needs a credential: the engine's API key, or the metrics token
 * (MCPCTL_METRICS_TOKEN), which opens /metrics and nothing else. Both are compared as SHA-256
 * digests in constant time, and an address that sends too many wrong ones is refused for a while.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { firstHeader, sendJson } from '../../shared/http.js';
import { readSettingsFile } from '../../shared/settings-file.js';
import { SETTINGS, settingValue, type SettingSources } from '../../shared/settings.js';
import { apiKeyProblem } from '../api-key.js';
import { EngineConfigError } from '../engine-errors.js';
import type { Logger } from '../engine-log.js';
import { FailureLimiter } from '../http/failure-limit.js';
import { isLoopbackAddress } from '../http/hosts.js';
import { errorBody, HttpError, statusOf } from '../http/respond.js';
import { ServiceError } from '../service-error.js';
import type { Observers } from './events.js';
import { PrometheusMetrics, type MetricSources } from './prometheus.js';

export const METRICS_PATH = '/metrics';

/** What serves /metrics: the pipeline's step and the address of its own call `serve`. */
export interface MetricsEndpoint {
  readonly metrics: PrometheusMetrics;
  /** the address of its own, once listening (`host:port`) */
  readonly address: string | undefined;
  /** answers a request for /metrics: the exposition, or 401/405/429 */
  serve(req: IncomingMessage, res: ServerResponse, failures: FailureLimiter): Promise<void>;
  close(): Promise<void>;
}

export interface MetricsConfig {
  token: string | undefined;
  address: { host: string; port: number } | undefined;
}

export interface MetricsOptions extends MetricSources, MetricsConfig {
  apiKey: string;
  observers: Observers;
  logger: Logger;
  clock?: () => number;
  /** told of the token, so no log line shows it */
  hideSecret?: (value: string) => void;
}

/** The metrics settings, checked: a token that is not strong enough, or a wide address without one, stop the start. */
export async function metricsSettings(
  env: Record<string, string | undefined>,
  settingsFile: string,
): Promise<MetricsConfig> {
  const sources: SettingSources = { env, file: await readSettingsFile(settingsFile) };
  const configError = (message: string) => new EngineConfigError(message);
  const token = settingValue(SETTINGS.metricsToken, sources, configError);
  const problem = token === undefined ? undefined : apiKeyProblem(token);
  if (problem !== undefined)
    throw new EngineConfigError(`MCPCTL_METRICS_TOKEN (metrics.token) cannot be used: ${problem}`);
  const raw = settingValue(SETTINGS.metricsAddress, sources, configError);
  if (raw === undefined) return { token, address: undefined };
  const address = parseAddress(raw);
  if (!isLoopbackAddress(address.host) && token === undefined) {
    throw new EngineConfigError(
      `MCPCTL_METRICS_ADDRESS (metrics.address) ${raw} is reached from beyond this machine: set MCPCTL_METRICS_TOKEN (metrics.token) too, so that only Prometheus can read the metrics`,
    );
  }
  return { token, address };
}

/** `host:port` (`[::1]:9464` for IPv6); the error names the setting. */
export function parseAddress(raw: string): { host: string; port: number } {
  const match = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(raw.trim());
  const port = match === null ? NaN : Number(match[2]);
  if (match === null || port > 65_535) {
    throw new EngineConfigError(
      `MCPCTL_METRICS_ADDRESS (metrics.address) must be host:port, such as 127.0.0.1:9464 or [::1]:9464; got ${JSON.stringify(raw)}`,
    );
  }
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
}

/** The exposition, told of every request, and its address of its own when the settings (metricsSettings) give one. */
export async function startMetrics(options: MetricsOptions): Promise<MetricsEndpoint> {
  const { token, address } = options;
  if (token !== undefined) options.hideSecret?.(token);
  const metrics = new PrometheusMetrics(options, options.clock);
  const removeObserver = options.observers.add(metrics);
  const keyDigest = digest(options.apiKey);
  const tokenDigest = token === undefined ? undefined : digest(token);
  const serve = async (req: IncomingMessage, res: ServerResponse, failures: FailureLimiter): Promise<void> => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      throw new HttpError('method_not_allowed', `${req.method} is not allowed on ${METRICS_PATH}; use GET`, {
        Allow: 'GET, HEAD',
      });
    }
    checkCredential(req, keyDigest, tokenDigest, failures);
    req.resume();
    const text = await metrics.text();
    res.statusCode = 200;
    res.setHeader('Content-Type', metrics.contentType);
    res.setHeader('Cache-Control', 'no-store');
    res.end(req.method === 'HEAD' ? undefined : text);
  };
  const own = address === undefined ? undefined : await listen(address, serve, options);
  return {
    metrics,
    address: own?.address,
    serve,
    async close() {
      removeObserver();
      metrics.close();
      if (own !== undefined) await own.close();
    },
  };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/**
 * The API key or the metrics token, or 401 (429 while the address is blocked). Both digests are
 * compared whatever the first gave, so the time taken says nothing of which one nearly matched.
 */
export function checkCredential(
  req: IncomingMessage,
  keyDigest: Buffer,
  tokenDigest: Buffer | undefined,
  failures: FailureLimiter,
): void {
  const address = req.socket.remoteAddress;
  const waiting = failures.blockedFor(address);
  if (waiting > 0) throw blocked(waiting);
  const header = firstHeader(req.headers.authorization);
  const match = header === undefined ? null : /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  const unauthorized = (message: string) =>
    new HttpError('unauthorized', message, { 'WWW-Authenticate': 'Bearer realm="mcpctl metrics"' });
  if (match === null) {
    throw unauthorized('the metrics need a credential: send Authorization: Bearer <the API key or the metrics token>');
  }
  const given = digest(match[1]!);
  const isKey = timingSafeEqual(given, keyDigest);
  const isToken = tokenDigest !== undefined && timingSafeEqual(given, tokenDigest);
  if (isKey || isToken) return;
  const seconds = failures.fail(address);
  if (seconds > 0) throw blocked(seconds);
  throw unauthorized('the credential is neither the API key nor the metrics token of this engine');
}

function blocked(seconds: number): HttpError {
  return new HttpError(
    'rate_limited',
    `too many requests with a wrong credential from this address; retry in ${seconds} s`,
    { 'Retry-After': String(seconds) },
  );
}

type Serve = MetricsEndpoint['serve'];

/** The address of its own: /metrics and nothing else, every answer behind the credential. */
async function listen(
  { host, port }: { host: string; port: number },
  serve: Serve,
  options: MetricsOptions,
): Promise<{ address: string; close(): Promise<void> }> {
  const failures = new FailureLimiter({}, options.clock);
  const server: Server = createServer((req, res) => {
    void answer(req, res, serve, failures, options.logger);
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new EngineConfigError(
          `the metrics cannot listen on ${host}:${port} (MCPCTL_METRICS_ADDRESS): ${error.code ?? error.message}`,
        ),
      ),
    );
    server.listen(port, host, () => resolve());
  });
  const bound = server.address();
  const shown = typeof bound === 'object' && bound !== null ? bound.port : port;
  const address = `${host.includes(':') ? `[${host}]` : host}:${shown}`;
  options.logger.info('metrics listening', { address, path: METRICS_PATH });
  return {
    address,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function answer(
  req: IncomingMessage,
  res: ServerResponse,
  serve: Serve,
  failures: FailureLimiter,
  logger: Logger,
): Promise<void> {
  try {
    const path = (req.url ?? '').split('?')[0];
    if (path !== METRICS_PATH) throw new ServiceError('not_found', `only ${METRICS_PATH} is served at this address`);
    await serve(req, res, failures);
  } catch (error) {
    const known = error instanceof ServiceError ? error : undefined;
    if (known === undefined) logger.error('answering a scrape failed', { error });
    const failure = known ?? new ServiceError('internal', 'the metrics could not be collected');
    req.resume();
    if (res.headersSent) res.destroy();
    else {
      const meta = { request_id: '', timestamp: new Date().toISOString() };
      sendJson(res, statusOf(failure.code), errorBody(failure, meta), {
        headers: error instanceof HttpError ? error.headers : {},
      });
    }
  }
}
