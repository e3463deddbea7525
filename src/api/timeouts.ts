/** How long a request waits for its answer unless told otherwise (`--request-timeout`). Pure. */
import { SETTINGS } from '../shared/settings.js';

export const DEFAULT_REQUEST_TIMEOUT_MS = SETTINGS.requestTimeout.default * 1000;
