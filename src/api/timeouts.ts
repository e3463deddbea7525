/** How long a request waits for its answer unless told otherwise (`--request-timeout`). Pure. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
