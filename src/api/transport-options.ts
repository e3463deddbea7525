/** What a client of the `/v1` service can be told: where, with which key, how long to wait and retry. */
import type { Agent } from 'node:http';
import { DEFAULT_REQUEST_TIMEOUT_MS } from './timeouts.js';

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
export type Operation =
  'build' | 'deploy' | 'status' | 'test' | 'list' | 'stop' | 'remove' | 'rollback' | 'logs' | 'metrics' | 'read';

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
  /**
   * The connections to use instead of the client's own kept-alive ones: an `http.Agent`, or an
   * `https.Agent` for an https URL (one that trusts a private CA, say). The caller closes it.
   */
  agent?: Agent;
  /** for tests: a random source, a sleep and a clock (milliseconds) */
  random?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  now?: () => number;
}
