/** Library entry: the contract, the definition schema and loader, and the client. */
export * from './api/contract.js';
export * as definition from './definition/schema.js';
export { ApiClient, type ApiClientOptions } from './api/client.js';
export { ApiError } from './api/errors.js';
