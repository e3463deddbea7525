/**
 * A typed client of the `/v1` contract over undici.
 *
 * Every answer is checked against the contract's zod schemas; an answer that does not follow it is
 * an `ApiError` of kind `contract` naming the field. Requests that are safe to repeat (GET, and POST
 * with an Idempotency-Key, which every POST here carries) are retried with jittered exponential
 * back-off on connection failures, 429 (honouring Retry-After) and 5xx. Two budgets bound the
 * waiting, and no attempt runs past the one that applies:
 *
 * - failures are retried only within the request's own time (the request timeout, or the longer
 *   time an operation is documented to take): a service that never answers fails once that is over;
 * - work the service reports as still running (409 with Retry-After for the same key), or a local
 *   engine that is known to be alive but slow, is waited for up to `maxPendingMs`.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { Agent, request, type Dispatcher } from 'undici';
import type { z } from 'zod';
import {
  AnyEnvelope,
  Deployment,
  DeploymentList,
  LogLine,
  LogPage,
  McpServer,
  Metrics,
  ModelList,
  ServerList,
  TestResult,
  type BuildRequestInput,
  type DeployRequest,
  type ErrorBody,
  type Meta,
  type ModelStatus,
  type TestRequest,
} from './contract.js';
import { formatPath } from '../shared/paths.js';
import { ApiError } from './errors.js';
import { DEFAULT_REQUEST_TIMEOUT_MS } from './timeouts.js';

/** Any model id: the service decides which it accepts. */
export type TestRequestInput = Omit<z.input<typeof TestRequest>, 'ai_model'> & { ai_model?: string };

export interface RetryPolicy {
  /** attempts that failed (no answer, 429, 5xx) in all, the first included */
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /**
   * Failures are retried only within this much time since the first attempt: no retry starts
   * after it and none runs past it. Default: the request's own timeout.
   */
  maxTotalMs?: number;
  /** a Retry-After longer than this is not waited for: the error goes to the caller */
  maxRetryAfterSeconds: number;
  /**
   * How long to keep waiting for work the service says is still running (409 with Retry-After for
   * the same Idempotency-Key), or for a service `isAlive` vouches for that is slow to answer.
   */
  maxPendingMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 4,
  baseDelayMs: 200,
  maxDelayMs: 5_000,
  maxRetryAfterSeconds: 30,
  maxPendingMs: 600_000,
};

export { DEFAULT_REQUEST_TIMEOUT_MS };

/** What a request was for, so an error can name the right kind of object. */
export type Operation = 'build' | 'deploy' | 'status' | 'test' | 'list' | 'stop' | 'rollback' | 'logs' | 'metrics' | 'read';

/** What an operation works on, as a message names it ("the build is still running"). */
export const OPERATION_OBJECTS: Partial<Record<string, string>> = {
  build: 'build',
  deploy: 'deployment',
  rollback: 'rollback',
  stop: 'stop',
  test: 'test run',
};

/** One request/response, as the debug hook sees it. The Authorization header is redacted. */
export interface ApiExchange {
  method: string;
  url: string;
  attempt: number;
  /** 0 when no answer came */
  status: number;
  requestId: string | undefined;
  ms: number;
  headers: Record<string, string>;
  /** what went wrong when there was no answer */
  error?: string;
}

export interface ApiClientOptions {
  /** the service's base URL, such as http://127.0.0.1:47321 (paths start with /v1) */
  baseUrl: string;
  apiKey: string;
  /** default 10 s, or the request timeout when that is shorter */
  connectTimeoutMs?: number;
  /**
   * How long a request may wait for its answer, retries included, default 30 s. Operations the
   * contract lets the service hold longer (a synchronous deploy, a test, a long-poll) wait at
   * least that long.
   */
  requestTimeoutMs?: number;
  /** longest silence while reading a body, default 30 s */
  bodyTimeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** ends every request and back-off sleep (Ctrl-C) */
  signal?: AbortSignal;
  debug?: (exchange: ApiExchange) => void;
  /**
   * True while the service is known to be alive (the local engine's process runs): a request it
   * does not answer in time is then asked again, with the same key, for up to `maxPendingMs`.
   */
  isAlive?: () => boolean;
  /** called once when the client starts waiting for work that is still running, or for a busy service */
  onWaiting?: (info: { operation: Operation; reason: 'still_running' | 'busy' }) => void;
  userAgent?: string;
  /** for tests: another undici dispatcher, a random source, a sleep and a clock (milliseconds) */
  dispatcher?: Dispatcher;
  random?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  now?: () => number;
}

export interface PostOptions {
  /** reused across this client's retries; a fresh UUID when absent */
  idempotencyKey?: string;
  /**
   * Let a request that is on its way finish when the client's signal aborts (Ctrl-C), so the
   * caller learns what it created (a deployment's id); no retry starts after the abort.
   */
  finishOnAbort?: boolean;
}

export interface DeployOptions extends PostOptions {
  /** send `Prefer: respond-async`: answer at once with a deployment in status deploying */
  async?: boolean;
}

export interface DeployAnswer {
  deployment: Deployment;
  /** 202: the service took the asynchronous route */
  accepted: boolean;
  requestId: string;
  /** set when the service answered 422 deploy_failed with the failed deployment as data */
  error?: ErrorBody;
  /** the answer's ETag, when the service sends one: a status long-poll can start from it */
  etag?: string;
}

export interface StatusOptions {
  /** long-poll: hold the request until the deployment changes, at most this many seconds (≤ 60) */
  waitSeconds?: number;
  /** the ETag of the last answer: with `waitSeconds`, answer only when it differs */
  etag?: string;
  signal?: AbortSignal;
}

export interface StatusAnswer {
  /** undefined when the service answered 304 Not Modified */
  deployment: Deployment | undefined;
  etag: string | undefined;
  requestId: string | undefined;
}

export interface DeploymentFilter {
  mcp_id?: string;
  environment?: string;
  status?: string;
  name?: string;
}

interface Call<T> {
  method: 'GET' | 'POST';
  operation: Operation;
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  schema: z.ZodType<T>;
  idempotencyKey?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** not ended by the client's own signal once sent (PostOptions.finishOnAbort) */
  finishOnAbort?: boolean;
  /** an error answer to return as data instead of throwing (422 deploy_failed with its deployment) */
  acceptError?: (status: number, error: ErrorBody | undefined) => boolean;
  /** 304 is an answer, not an error */
  allowNotModified?: boolean;
}

interface Answer<T> {
  status: number;
  data: T | undefined;
  meta: Meta | undefined;
  error: ErrorBody | undefined;
  headers: Record<string, string | string[] | undefined>;
}

const STATUS_CODES: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'validation_failed',
  429: 'rate_limited',
  501: 'not_implemented',
  503: 'unavailable',
};

/** The error code a status stands for when the answer carries none. */
export function codeForStatus(status: number): string {
  return STATUS_CODES[status] ?? (status >= 500 ? 'internal' : 'bad_request');
}

/** `Retry-After` in seconds: either delay-seconds or an HTTP-date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now) / 1000));
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export class ApiClient {
  readonly baseUrl: string;
  private readonly apiKey: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly retry: RetryPolicy;
  private readonly requestTimeoutMs: number;
  private readonly bodyTimeoutMs: number;
  private readonly connectTimeoutMs: number;
  private readonly options: ApiClientOptions;
  private readonly random: () => number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly now: () => number;

  constructor(options: ApiClientOptions) {
    const url = new URL(options.baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`not an http(s) URL: ${options.baseUrl}`);
    this.baseUrl = url.href.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.options = options;
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.connectTimeoutMs = options.connectTimeoutMs ?? Math.min(10_000, this.requestTimeoutMs);
    this.bodyTimeoutMs = options.bodyTimeoutMs ?? 30_000;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.random = options.random ?? Math.random;
    this.sleep = options.sleep ?? ((ms, signal) => delay(ms, undefined, { signal }));
    this.now = options.now ?? (() => performance.now());
    this.ownsDispatcher = options.dispatcher === undefined;
    this.dispatcher =
      options.dispatcher ??
      new Agent({ connect: { timeout: this.connectTimeoutMs }, keepAliveTimeout: 4_000, connections: 8 });
  }

  /** Closes the connections this client opened. */
  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // --- operations ---------------------------------------------------------------------------

  /** POST /v1/build */
  async build(body: BuildRequestInput, options: PostOptions = {}): Promise<McpServer> {
    return this.data(await this.send({ method: 'POST', operation: 'build', path: '/v1/build', body, schema: McpServer, ...idem(options) }));
  }

  /**
   * POST /v1/deploy. Resolves with the deployment for 200 (deployed), 202 (deploying) and
   * 422 deploy_failed (failed, with `error`), so the caller handles every outcome the same way.
   */
  async deploy(body: DeployRequest, options: DeployOptions = {}): Promise<DeployAnswer> {
    return this.deployLike('deploy', '/v1/deploy', body, options);
  }

  /** GET /v1/deploy/{id}/status, optionally long-polling. */
  async status(deploymentId: string, options: StatusOptions = {}): Promise<StatusAnswer> {
    const wait = options.waitSeconds === undefined ? undefined : Math.min(60, Math.max(0, Math.ceil(options.waitSeconds)));
    const answer = await this.send({
      method: 'GET',
      operation: 'status',
      path: `/v1/deploy/${encodeURIComponent(deploymentId)}/status`,
      query: { wait: wait === undefined || wait === 0 ? undefined : wait },
      headers: options.etag !== undefined && wait !== undefined && wait > 0 ? { 'if-none-match': options.etag } : {},
      schema: Deployment,
      timeoutMs: wait === undefined ? undefined : this.requestTimeoutMs + wait * 1000,
      allowNotModified: true,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    return {
      deployment: answer.status === 304 ? undefined : this.data(answer),
      etag: header(answer.headers, 'etag') ?? options.etag,
      requestId: answer.meta?.request_id ?? header(answer.headers, 'x-request-id'),
    };
  }

  /** POST /v1/test */
  async test(body: TestRequestInput, options: PostOptions = {}): Promise<TestResult> {
    return this.data(
      await this.send({
        method: 'POST',
        operation: 'test',
        path: '/v1/test',
        body,
        schema: TestResult,
        // an agent run with a real model can take a while
        timeoutMs: Math.max(this.requestTimeoutMs, 180_000),
        ...idem(options),
      }),
    );
  }

  /** GET /v1/models: the test models and whether the service can run each now. */
  async models(): Promise<ModelStatus[]> {
    return this.data(await this.send({ method: 'GET', operation: 'read', path: '/v1/models', schema: ModelList })).models;
  }

  /** GET /v1/servers */
  async listServers(filter: { name?: string } = {}): Promise<McpServer[]> {
    return this.data(await this.send({ method: 'GET', operation: 'list', path: '/v1/servers', query: { ...filter }, schema: ServerList })).servers;
  }

  /** GET /v1/servers/{mcp_id} */
  async getServer(mcpId: string): Promise<McpServer> {
    return this.data(await this.send({ method: 'GET', operation: 'read', path: `/v1/servers/${encodeURIComponent(mcpId)}`, schema: McpServer }));
  }

  /** GET /v1/deployments */
  async listDeployments(filter: DeploymentFilter = {}): Promise<Deployment[]> {
    return this.data(await this.send({ method: 'GET', operation: 'list', path: '/v1/deployments', query: { ...filter }, schema: DeploymentList }))
      .deployments;
  }

  /** POST /v1/deploy/{id}/stop */
  async stop(deploymentId: string, options: PostOptions = {}): Promise<Deployment> {
    return this.data(
      await this.send({
        method: 'POST',
        operation: 'stop',
        path: `/v1/deploy/${encodeURIComponent(deploymentId)}/stop`,
        schema: Deployment,
        ...idem(options),
      }),
    );
  }

  /** POST /v1/deploy/{id}/rollback: the new deployment, answered like a deploy. */
  async rollback(deploymentId: string, options: DeployOptions = {}): Promise<DeployAnswer> {
    return this.deployLike('rollback', `/v1/deploy/${encodeURIComponent(deploymentId)}/rollback`, undefined, options);
  }

  /** GET /v1/deploy/{id}/logs */
  async logs(deploymentId: string, options: { since?: string; limit?: number } = {}): Promise<LogLine[]> {
    return this.data(
      await this.send({
        method: 'GET',
        operation: 'logs',
        path: `/v1/deploy/${encodeURIComponent(deploymentId)}/logs`,
        query: { since: options.since, limit: options.limit },
        schema: LogPage,
      }),
    ).lines;
  }

  /**
   * GET /v1/deploy/{id}/logs?follow=1: calls `onLine` for every log line of the NDJSON stream
   * until the stream ends or `signal` aborts (then it resolves quietly).
   */
  async followLogs(
    deploymentId: string,
    onLine: (line: LogLine) => void,
    signal?: AbortSignal,
    options: { since?: string; limit?: number } = {},
  ): Promise<void> {
    const url = this.url(`/v1/deploy/${encodeURIComponent(deploymentId)}/logs`, { follow: 1, since: options.since, limit: options.limit });
    const combined = this.signalFor(signal);
    const headers = this.headers({ accept: 'application/x-ndjson' }, false);
    const started = performance.now();
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        dispatcher: this.dispatcher,
        method: 'GET',
        headers,
        headersTimeout: this.requestTimeoutMs,
        // the stream sends an empty line every 15 s; four missed ones mean it is gone
        bodyTimeout: 60_000,
        ...(combined === undefined ? {} : { signal: combined }),
      });
    } catch (error) {
      if (signal?.aborted === true) return;
      throw this.failure(error, 'GET', url, combined, 1, started, headers);
    }
    const contentType = header(res.headers, 'content-type') ?? '';
    if (res.statusCode !== 200 || !contentType.includes('ndjson')) {
      this.report('GET', url, 1, started, headers, res.statusCode, header(res.headers, 'x-request-id'));
      // an error envelope, or a service that answers with one page instead of a stream
      const text = await res.body.text().catch(() => '');
      const page = this.parse({ method: 'GET', operation: 'logs', path: url, schema: LogPage }, url, res.statusCode, res.headers, text);
      for (const line of page.data?.lines ?? []) onLine(line);
      return;
    }
    this.report('GET', url, 1, started, headers, res.statusCode, header(res.headers, 'x-request-id'));
    const decoder = new TextDecoder();
    let buffer = '';
    let lineNo = 0;
    const emit = (text: string) => {
      lineNo += 1;
      if (text.trim() === '') return; // keep-alive
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        throw this.contractError('GET', url, `line ${lineNo}`, 'is not JSON', header(res.headers, 'x-request-id'));
      }
      const parsed = LogLine.safeParse(value);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw this.contractError(
          'GET',
          url,
          `line ${lineNo}${issue === undefined || issue.path.length === 0 ? '' : ` ${formatPath(issue.path)}`}`,
          issue?.message ?? 'is not a log line',
          header(res.headers, 'x-request-id'),
        );
      }
      onLine(parsed.data);
    };
    try {
      for await (const chunk of res.body) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let newline = buffer.indexOf('\n');
        while (newline >= 0) {
          emit(buffer.slice(0, newline));
          buffer = buffer.slice(newline + 1);
          newline = buffer.indexOf('\n');
        }
      }
      buffer += decoder.decode();
      if (buffer !== '') emit(buffer);
    } catch (error) {
      if (signal?.aborted === true || this.options.signal?.aborted === true) {
        res.body.destroy();
        if (signal?.aborted === true) return;
      }
      if (error instanceof ApiError) {
        res.body.destroy();
        throw error;
      }
      throw this.failure(error, 'GET', url, combined, 1, started, headers, false);
    }
  }

  /** GET /v1/deploy/{id}/metrics */
  async metrics(deploymentId: string, windowSeconds?: number): Promise<Metrics> {
    return this.data(
      await this.send({
        method: 'GET',
        operation: 'metrics',
        path: `/v1/deploy/${encodeURIComponent(deploymentId)}/metrics`,
        query: { window: windowSeconds },
        schema: Metrics,
      }),
    );
  }

  // --- machinery ----------------------------------------------------------------------------

  private async deployLike(operation: 'deploy' | 'rollback', path: string, body: unknown, options: DeployOptions): Promise<DeployAnswer> {
    const answer = await this.send({
      method: 'POST',
      operation,
      path,
      body,
      schema: Deployment,
      headers: options.async === true ? { prefer: 'respond-async' } : {},
      // a synchronous deploy answers within 120 s (docs/api.md, limits)
      timeoutMs: options.async === true ? undefined : Math.max(this.requestTimeoutMs, 135_000),
      acceptError: (status, error) => status === 422 && error?.code === 'deploy_failed',
      ...idem(options),
    });
    const deployment = this.data(answer);
    return {
      deployment,
      accepted: answer.status === 202,
      requestId: answer.meta?.request_id ?? '',
      ...(answer.error === undefined ? {} : { error: answer.error }),
      ...(header(answer.headers, 'etag') === undefined ? {} : { etag: header(answer.headers, 'etag')! }),
    };
  }

  private data<T>(answer: Answer<T>): T {
    if (answer.data === undefined) throw new Error('no data in an accepted answer');
    return answer.data;
  }

  private url(path: string, query: Record<string, string | number | undefined> = {}): string {
    const url = new URL(this.baseUrl + path);
    for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== '') url.searchParams.set(key, String(value));
    return url.href;
  }

  private headers(extra: Record<string, string>, withBody: boolean): Record<string, string> {
    return {
      accept: 'application/json',
      authorization: `Bearer ${this.apiKey}`,
      'user-agent': this.options.userAgent ?? 'mcpctl',
      ...(withBody ? { 'content-type': 'application/json' } : {}),
      ...extra,
    };
  }

  private signalFor(extra: AbortSignal | undefined): AbortSignal | undefined {
    const signals = [this.options.signal, extra].filter((s): s is AbortSignal => s !== undefined);
    if (signals.length === 0) return undefined;
    return signals.length === 1 ? signals[0] : AbortSignal.any(signals);
  }

  /**
   * Sends with retries for requests that are safe to repeat, within two budgets (see the top of
   * this file). Every attempt's wait for its answer ends where the budget that applies ends.
   */
  private async send<T>(call: Call<T>): Promise<Answer<T>> {
    const repeatable = call.method === 'GET' || call.idempotencyKey !== undefined;
    const signal = call.finishOnAbort === true ? call.signal : this.signalFor(call.signal);
    const attemptTimeout = call.timeoutMs ?? this.requestTimeoutMs;
    const first = this.now();
    const failureDeadline = first + (this.retry.maxTotalMs ?? attemptTimeout);
    const pendingDeadline = first + this.retry.maxPendingMs;
    let failures = 0;
    let pending: 'still_running' | 'busy' | undefined;
    for (let attempt = 1; ; attempt++) {
      const deadline = pending === undefined ? failureDeadline : pendingDeadline;
      const timeoutMs = Math.max(1, Math.min(attemptTimeout, deadline - this.now()));
      try {
        return await this.once(call, attempt, signal, timeoutMs);
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        if (call.finishOnAbort === true && this.options.signal?.aborted === true && error.kind !== 'aborted') {
          throw new ApiError({ kind: 'aborted', code: 'aborted', message: 'interrupted', method: call.method, operation: call.operation, cause: error });
        }
        error.attempts = attempt;
        error.operation = call.operation;
        if (call.idempotencyKey !== undefined) error.idempotencyKey = call.idempotencyKey;
        if (!repeatable) throw error;
        const busy = error.kind === 'network' && error.code === 'timeout' && this.options.isAlive?.() === true;
        let wait: number;
        if (error.stillRunning || busy) {
          // Not a failure: the service works on it (or, alive, is too loaded to answer yet).
          const reason = error.stillRunning ? 'still_running' : 'busy';
          if (pending === undefined) this.options.onWaiting?.({ operation: call.operation, reason });
          pending = reason;
          error.waitedMs = this.now() - first;
          wait = error.retryAfter === undefined ? this.retry.baseDelayMs : Math.min(error.retryAfter, this.retry.maxRetryAfterSeconds) * 1000;
          if (this.now() + wait >= pendingDeadline) throw error;
        } else {
          failures += 1;
          // A request nobody answered in time is not sent again: the service has it, and another
          // wait as long would only double the time to fail.
          if (!error.transient || error.code === 'timeout' || failures >= this.retry.attempts) throw error;
          const cap = Math.min(this.retry.maxDelayMs, this.retry.baseDelayMs * 2 ** (failures - 1));
          wait = this.random() * cap; // full jitter
          if (error.retryAfter !== undefined) {
            if (error.retryAfter > this.retry.maxRetryAfterSeconds) throw error;
            wait = error.retryAfter * 1000 + this.random() * this.retry.baseDelayMs;
          }
          if (this.now() + wait >= (pending === undefined ? failureDeadline : pendingDeadline)) throw error;
        }
        try {
          await this.sleep(wait, signal);
        } catch (cause) {
          throw new ApiError({ kind: 'aborted', code: 'aborted', message: 'interrupted', method: call.method, operation: call.operation, cause });
        }
      }
    }
  }

  private async once<T>(call: Call<T>, attempt: number, signal: AbortSignal | undefined, timeoutMs: number): Promise<Answer<T>> {
    const url = this.url(call.path, call.query);
    const withBody = call.body !== undefined || call.method === 'POST';
    const headers = this.headers(
      { ...(call.idempotencyKey === undefined ? {} : { 'idempotency-key': call.idempotencyKey }), ...call.headers },
      withBody,
    );
    const started = performance.now();
    let res: Dispatcher.ResponseData;
    let text: string;
    try {
      res = await request(url, {
        dispatcher: this.dispatcher,
        method: call.method,
        headers,
        ...(withBody ? { body: JSON.stringify(call.body ?? {}) } : {}),
        headersTimeout: timeoutMs,
        bodyTimeout: this.bodyTimeoutMs,
        ...(signal === undefined ? {} : { signal }),
      });
      text = await res.body.text();
    } catch (error) {
      throw this.failure(error, call.method, url, signal, attempt, started, headers, true, timeoutMs);
    }
    const requestId = header(res.headers, 'x-request-id');
    this.report(call.method, url, attempt, started, headers, res.statusCode, requestId);
    return this.parse(call, url, res.statusCode, res.headers, text);
  }

  private parse<T>(
    call: Call<T>,
    url: string,
    status: number,
    headers: Record<string, string | string[] | undefined>,
    text: string,
  ): Answer<T> {
    const headerId = header(headers, 'x-request-id');
    const retryAfter = parseRetryAfter(header(headers, 'retry-after'));
    if (status === 304 && call.allowNotModified === true) return { status, data: undefined, meta: undefined, error: undefined, headers };

    let body: unknown;
    let json = true;
    try {
      body = JSON.parse(text);
    } catch {
      json = false;
    }
    const envelope = json ? AnyEnvelope.safeParse(body) : undefined;
    if (envelope === undefined || !envelope.success) {
      if (status >= 400) {
        // a proxy or load balancer answered, not the service: keep the status, it says enough
        throw new ApiError({
          kind: 'http',
          status,
          code: codeForStatus(status),
          message: `the service answered HTTP ${status} without a /v1 error body`,
          ...(headerId === undefined ? {} : { requestId: headerId }),
          ...(retryAfter === undefined ? {} : { retryAfter }),
          method: call.method,
          url,
        });
      }
      const issue = envelope?.error.issues[0];
      throw this.contractError(
        call.method,
        url,
        issue === undefined ? undefined : formatPath(issue.path),
        json ? (issue?.message ?? 'is not an envelope') : 'the answer is not JSON',
        headerId,
        status,
      );
    }
    const env = envelope.data;
    const requestId = env.meta.request_id;
    if (status >= 400 || !env.success) {
      if (status < 400) {
        throw this.contractError(call.method, url, 'success', `is false in an HTTP ${status} answer`, requestId, status);
      }
      if (call.acceptError?.(status, env.error) === true && env.data !== null) {
        return { status, data: this.check(call, url, env.data, requestId, status), meta: env.meta, error: env.error, headers };
      }
      throw new ApiError({
        kind: 'http',
        status,
        code: env.error?.code ?? codeForStatus(status),
        message: env.error?.message ?? `the service answered HTTP ${status}`,
        requestId,
        details: env.error?.details ?? [],
        ...(retryAfter === undefined ? {} : { retryAfter }),
        data: env.data,
        method: call.method,
        url,
      });
    }
    if (status < 200 || status >= 300) {
      throw this.contractError(call.method, url, undefined, `unexpected HTTP ${status} for a successful answer`, requestId, status);
    }
    return { status, data: this.check(call, url, env.data, requestId, status), meta: env.meta, error: undefined, headers };
  }

  private check<T>(call: Call<T>, url: string, data: unknown, requestId: string, status: number): T {
    const parsed = call.schema.safeParse(data);
    if (parsed.success) return parsed.data;
    const issues = parsed.error.issues.slice(0, 3);
    const message = issues.map((i) => `${formatPath(['data', ...i.path])}: ${i.message}`).join('; ');
    throw new ApiError({
      kind: 'contract',
      status,
      code: 'contract_violation',
      message: `the answer does not follow the /v1 contract: ${message}`,
      requestId,
      details: issues.map((i) => ({ path: formatPath(['data', ...i.path]), message: i.message })),
      method: call.method,
      url,
    });
  }

  private contractError(
    method: string,
    url: string,
    path: string | undefined,
    message: string,
    requestId: string | undefined,
    status = 200,
  ): ApiError {
    const where = path === undefined || path === '' ? '' : `${path}: `;
    return new ApiError({
      kind: 'contract',
      status,
      code: 'contract_violation',
      message: `the answer does not follow the /v1 contract: ${where}${message}`,
      ...(requestId === undefined ? {} : { requestId }),
      details: path === undefined ? [] : [{ path, message }],
      method,
      url,
    });
  }

  private failure(
    error: unknown,
    method: string,
    url: string,
    signal: AbortSignal | undefined,
    attempt: number,
    started: number,
    headers: Record<string, string>,
    report = true,
    timeoutMs = this.requestTimeoutMs,
  ): ApiError {
    if (signal?.aborted === true) {
      return new ApiError({ kind: 'aborted', code: 'aborted', message: 'interrupted', method, url, cause: error });
    }
    const code = (error as { code?: unknown }).code;
    const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;
    let message: string;
    let kind = 'unreachable';
    switch (code) {
      case 'ECONNREFUSED':
        message = 'connection refused';
        break;
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
        message = 'host not found';
        break;
      case 'UND_ERR_CONNECT_TIMEOUT':
        kind = 'timeout';
        message = `could not connect within ${seconds(this.connectTimeoutMs)}`;
        break;
      case 'UND_ERR_HEADERS_TIMEOUT':
        kind = 'timeout';
        message = `no answer within ${seconds(timeoutMs)}`;
        break;
      case 'UND_ERR_BODY_TIMEOUT':
        kind = 'timeout';
        message = 'the answer stalled';
        break;
      case 'ECONNRESET':
      case 'EPIPE':
      case 'UND_ERR_SOCKET':
      case 'UND_ERR_CLOSED':
        message = 'the connection was dropped before the answer was complete';
        break;
      default:
        message = error instanceof Error ? error.message : String(error);
    }
    if (report) this.report(method, url, attempt, started, headers, 0, undefined, message);
    return new ApiError({ kind: 'network', code: kind, message, method, url, cause: error });
  }

  private report(
    method: string,
    url: string,
    attempt: number,
    started: number,
    headers: Record<string, string>,
    status: number,
    requestId: string | undefined,
    error?: string,
  ): void {
    if (this.options.debug === undefined) return;
    this.options.debug({
      method,
      url,
      attempt,
      status,
      requestId,
      ms: Math.round(performance.now() - started),
      headers: { ...headers, authorization: 'Bearer [redacted]' },
      ...(error === undefined ? {} : { error }),
    });
  }
}

function idem(options: PostOptions): { idempotencyKey: string; finishOnAbort?: boolean } {
  return { idempotencyKey: options.idempotencyKey ?? randomUUID(), ...(options.finishOnAbort === true ? { finishOnAbort: true } : {}) };
}
