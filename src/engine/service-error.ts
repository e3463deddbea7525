import type { ErrorCode } from '../api/contract.js';

/** Thrown by services for failures the API answers with an error envelope. */
export class ServiceError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Array<{ path: string; message: string }>,
    /** a record to return as `data` alongside the error (a failed build or deployment) */
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}
