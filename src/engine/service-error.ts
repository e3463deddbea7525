import type { ErrorCode } from '../api/contract.js';
import { storageFaultOf } from './store/storage-fault.js';

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

/**
 * The API's answer to a write the engine's disk refused (store/storage-fault.ts): the engine's
 * problem, said as such, never the request's. Undefined for any other error.
 */
export function storageServiceError(error: unknown): ServiceError | undefined {
  const fault = storageFaultOf(error);
  if (fault === undefined) return undefined;
  const what = fault.path === undefined ? 'its files' : fault.path;
  if (fault.kind === 'full') {
    const why = fault.errno === 'EDQUOT' ? 'the disk quota of its user is used up' : 'no space is left on its disk';
    return new ServiceError('storage_full', `the engine could not write ${what}: ${why} (${fault.errno})`);
  }
  const why = fault.errno === 'EROFS' ? 'the file system is read-only' : 'its user may not write there';
  return new ServiceError('storage_unwritable', `the engine could not write ${what}: ${why} (${fault.errno})`);
}
