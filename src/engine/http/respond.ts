/**
 * Writing answers: the envelope on every response, errors with their stable code and status.
 */
import { ERROR_CODES, type ErrorCode, type ErrorDetail } from '../../api/contract.js';
import { ServiceError } from '../service-error.js';

/** A ServiceError that also sets response headers (Allow, Retry-After, WWW-Authenticate). */
export class HttpError extends ServiceError {
  constructor(
    code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
    details?: ErrorDetail[],
  ) {
    super(code, message, details);
  }
}

export interface Reply {
  status: number;
  data: unknown;
  headers?: Record<string, string>;
}

export interface EnvelopeBody {
  success: boolean;
  data: unknown;
  meta: { request_id: string; timestamp: string };
  error?: { code: string; message: string; details?: ErrorDetail[] };
}

export function successBody(data: unknown, meta: EnvelopeBody['meta']): EnvelopeBody {
  return { success: true, data, meta };
}

export function errorBody(error: ServiceError, meta: EnvelopeBody['meta']): EnvelopeBody {
  return {
    success: false,
    data: error.data ?? null,
    meta,
    error: {
      code: error.code,
      message: error.message,
      ...(error.details === undefined || error.details.length === 0 ? {} : { details: error.details }),
    },
  };
}

export function statusOf(code: ErrorCode): number {
  return ERROR_CODES[code];
}
