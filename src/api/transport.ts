/**
 * The transport of the `/v1` client: requests on `node:http` (`http-request.ts`) with the key,
 * time-outs, retries, kept-alive connections and a debug hook.
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
import type { Agent } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { header, parseAnswer, type Answer, type Call } from './responses.js';
import { ApiError } from './errors.js';
import { createAgent, exchange, readBody } from './http-request.js';
import { DEFAULT_RETRY, type ApiClientOptions, type RetryPolicy } from './transport-options.js';
import { DEFAULT_REQUEST_TIMEOUT_MS } from './timeouts.js';

export class Transport {
  readonly baseUrl: string;
  private readonly apiKey: string;
  private agentPromise: Promise<Agent> | undefined;
  private readonly ownsAgent: boolean;
  private readonly retry: RetryPolicy;
  readonly requestTimeoutMs: number;
  readonly bodyTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly options: ApiClientOptions;
  private readonly random: () => number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly now: () => number;

  constructor(options: ApiClientOptions) {
    const url = new URL(options.baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new TypeError(`not an http(s) URL: ${options.baseUrl}`);
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
    this.ownsAgent = options.agent === undefined;
    this.agentPromise = options.agent === undefined ? undefined : Promise.resolve(options.agent);
  }

  /** The connections of this client: the one it was given, else its own, made at the first request. */
  agent(): Promise<Agent> {
    this.agentPromise ??= createAgent(new URL(this.baseUrl).protocol);
    return this.agentPromise;
  }

  /** Closes the connections this client opened. */
  async close(): Promise<void> {
    if (this.ownsAgent && this.agentPromise !== undefined) (await this.agentPromise).destroy();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  data<T>(answer: Answer<T>): T {
    if (answer.data === undefined) throw new Error('no data in an accepted answer');
    return answer.data;
  }

  url(path: string, query: Record<string, string | number | undefined> = {}): string {
    const url = new URL(this.baseUrl + path);
    for (const [key, value] of Object.entries(query))
      if (value !== undefined && value !== '') url.searchParams.set(key, String(value));
    return url.href;
  }

  headers(extra: Record<string, string>, withBody: boolean): Record<string, string> {
    return {
      accept: 'application/json',
      authorization: `Bearer ${this.apiKey}`,
      'user-agent': this.options.userAgent ?? 'mcpctl',
      ...(withBody ? { 'content-type': 'application/json' } : {}),
      ...extra,
    };
  }

  signalFor(extra: AbortSignal | undefined): AbortSignal | undefined {
    const signals = [this.options.signal, extra].filter((s): s is AbortSignal => s !== undefined);
    if (signals.length === 0) return undefined;
    return signals.length === 1 ? signals[0] : AbortSignal.any(signals);
  }

  /**
   * Sends with retries for requests that are safe to repeat, within two budgets (see the top of
   * this file). Every attempt's wait for its answer ends where the budget that applies ends.
   */
  async send<T>(call: Call<T>): Promise<Answer<T>> {
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
          throw new ApiError({
            kind: 'aborted',
            code: 'aborted',
            message: 'interrupted',
            method: call.method,
            operation: call.operation,
            cause: error,
          });
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
          wait =
            error.retryAfter === undefined
              ? this.retry.baseDelayMs
              : Math.min(error.retryAfter, this.retry.maxRetryAfterSeconds) * 1000;
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
          throw new ApiError({
            kind: 'aborted',
            code: 'aborted',
            message: 'interrupted',
            method: call.method,
            operation: call.operation,
            cause,
          });
        }
      }
    }
  }

  private async once<T>(
    call: Call<T>,
    attempt: number,
    signal: AbortSignal | undefined,
    timeoutMs: number,
  ): Promise<Answer<T>> {
    const url = this.url(call.path, call.query);
    const withBody = call.body !== undefined || call.method === 'POST';
    const headers = this.headers(
      { ...(call.idempotencyKey === undefined ? {} : { 'idempotency-key': call.idempotencyKey }), ...call.headers },
      withBody,
    );
    const started = performance.now();
    let status: number;
    let answerHeaders: Record<string, string | string[] | undefined>;
    let text: string;
    try {
      const res = await exchange(url, {
        method: call.method,
        headers,
        body: withBody ? JSON.stringify(call.body ?? {}) : undefined,
        agent: await this.agent(),
        signal,
        connectTimeoutMs: this.connectTimeoutMs,
        headersTimeoutMs: timeoutMs,
      });
      status = res.statusCode ?? 0;
      answerHeaders = res.headers;
      text = await readBody(res, this.bodyTimeoutMs);
    } catch (error) {
      throw this.failure(error, call.method, url, signal, attempt, started, headers, true, timeoutMs);
    }
    const requestId = header(answerHeaders, 'x-request-id');
    this.report(call.method, url, attempt, started, headers, status, requestId);
    return parseAnswer(call, url, status, answerHeaders, text);
  }

  failure(
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
      case 'CONNECT_TIMEOUT':
        kind = 'timeout';
        message = `could not connect within ${seconds(this.connectTimeoutMs)}`;
        break;
      case 'HEADERS_TIMEOUT':
        kind = 'timeout';
        message = `no answer within ${seconds(timeoutMs)}`;
        break;
      case 'BODY_TIMEOUT':
        kind = 'timeout';
        message = 'the answer stalled';
        break;
      case 'ECONNRESET':
      case 'EPIPE':
      case 'ECONNABORTED':
      case 'ERR_STREAM_PREMATURE_CLOSE':
        message = 'the connection was dropped before the answer was complete';
        break;
      default:
        message = error instanceof Error ? error.message : String(error);
    }
    if (report) this.report(method, url, attempt, started, headers, 0, undefined, message);
    return new ApiError({ kind: 'network', code: kind, message, method, url, cause: error });
  }

  report(
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
