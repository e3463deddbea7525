/**
 * The one error the client throws. `kind` says what failed, so callers never sniff messages:
 *
 * - `http`: the service answered with an error envelope (status, code, details, request id);
 * - `network`: no answer: connection refused or reset, DNS, time-outs, a dropped connection;
 * - `contract`: an answer that does not follow the /v1 contract (the field path says where);
 * - `aborted`: the caller's signal ended the request.
 *
 * Pure: no IO.
 */
import type { ErrorDetail } from './operations.js';

export type ApiErrorKind = 'http' | 'network' | 'contract' | 'aborted';

export interface ApiErrorInit {
  kind: ApiErrorKind;
  /** HTTP status; 0 when there was no answer */
  status?: number;
  /** the envelope's error code, or one of `unreachable`, `timeout`, `contract_violation`, `aborted` */
  code: string;
  message: string;
  requestId?: string;
  details?: ErrorDetail[];
  /** seconds to wait before retrying (from Retry-After) */
  retryAfter?: number;
  /** `data` of the error envelope (a failed deployment) */
  data?: unknown;
  method?: string;
  url?: string;
  /** how many attempts were made */
  attempts?: number;
  /** what the request was for (build, deploy, stop, …), so a message can name the right object */
  operation?: string;
  cause?: unknown;
}

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly kind: ApiErrorKind;
  readonly status: number;
  readonly code: string;
  readonly requestId: string | undefined;
  readonly details: ErrorDetail[];
  readonly retryAfter: number | undefined;
  readonly data: unknown;
  readonly method: string | undefined;
  readonly url: string | undefined;
  attempts: number;
  /** what the request was for: build, deploy, status, test, list, stop, rollback, logs, metrics, read */
  operation: string | undefined;
  /** the Idempotency-Key the request carried: the same key picks up its result later */
  idempotencyKey: string | undefined;
  /** set when the client gave up while waiting for work still running: how long it waited, in ms */
  waitedMs: number | undefined;

  constructor(init: ApiErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.kind = init.kind;
    this.status = init.status ?? 0;
    this.code = init.code;
    this.requestId = init.requestId;
    this.details = init.details ?? [];
    this.retryAfter = init.retryAfter;
    this.data = init.data;
    this.method = init.method;
    this.url = init.url;
    this.attempts = init.attempts ?? 1;
    this.operation = init.operation;
    this.idempotencyKey = undefined;
    this.waitedMs = undefined;
  }

  /** A 409 with Retry-After: the same idempotent request is still running (docs/api.md). */
  get stillRunning(): boolean {
    return this.kind === 'http' && this.status === 409 && this.retryAfter !== undefined;
  }

  /**
   * Worth another attempt if the request is safe to repeat: no answer, 429, 5xx (not 501, and not
   * 507: a full disk stays full for seconds), or a 409 with Retry-After (the same idempotent request
   * still running; docs/api.md).
   */
  get transient(): boolean {
    if (this.kind === 'network') return true;
    if (this.kind !== 'http') return false;
    if (this.status === 409) return this.stillRunning;
    return this.status === 429 || (this.status >= 500 && this.status !== 501 && this.status !== 507);
  }
}

export function isApiError(error: unknown): error is ApiError {
  return error instanceof ApiError;
}
