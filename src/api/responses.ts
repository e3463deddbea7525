/**
 * Reading an answer of the `/v1` service: the envelope, the data checked against the contract's
 * schema, and the error an answer that does not follow the contract becomes (naming the field).
 */
import type { z } from 'zod';
import { formatPath } from '../shared/paths.js';
import { AnyEnvelope, type ErrorBody, type Meta } from './operations.js';
import { ApiError } from './errors.js';
import type { Operation } from './transport-options.js';

/**
 * How answers are checked: zod's interpreted path, not the parser it would generate and compile
 * (`new Function`) for each object schema the first time it is used. A client makes a handful of
 * requests per schema (a command makes a few in all), so compiling cost more than it saved: in
 * `mcpctl deploy`, ≈20 of its ≈40 ms in zod. A log stream, which checks every line with one
 * schema, keeps the compiled parser.
 */
const CHECK = { jitless: true } as const;

export interface Call<T> {
  method: 'GET' | 'POST' | 'DELETE';
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

export interface Answer<T> {
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

export function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export function parseAnswer<T>(
  call: Call<T>,
  url: string,
  status: number,
  headers: Record<string, string | string[] | undefined>,
  text: string,
): Answer<T> {
  const headerId = header(headers, 'x-request-id');
  const retryAfter = parseRetryAfter(header(headers, 'retry-after'));
  if (status === 304 && call.allowNotModified === true)
    return { status, data: undefined, meta: undefined, error: undefined, headers };

  let body: unknown;
  let json = true;
  try {
    body = JSON.parse(text);
  } catch {
    json = false;
  }
  const envelope = json ? AnyEnvelope.safeParse(body, CHECK) : undefined;
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
    throw contractError(
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
      throw contractError(call.method, url, 'success', `is false in an HTTP ${status} answer`, requestId, status);
    }
    if (call.acceptError?.(status, env.error) === true && env.data !== null) {
      return {
        status,
        data: checkData(call, url, env.data, requestId, status),
        meta: env.meta,
        error: env.error,
        headers,
      };
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
    throw contractError(
      call.method,
      url,
      undefined,
      `unexpected HTTP ${status} for a successful answer`,
      requestId,
      status,
    );
  }
  return { status, data: checkData(call, url, env.data, requestId, status), meta: env.meta, error: undefined, headers };
}

function checkData<T>(call: Call<T>, url: string, data: unknown, requestId: string, status: number): T {
  const parsed = call.schema.safeParse(data, CHECK);
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

export function contractError(
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
