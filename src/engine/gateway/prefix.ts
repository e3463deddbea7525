/** Where the engine serves: the API under /v1, the data plane under this prefix. */
export const GATEWAY_PREFIX = '/d';
