/** The options and answers of ApiClient's methods (client.ts), apart so the client stays readable. */
import type { z } from 'zod';
import type { Deployment, ErrorBody, TestRequest } from './operations.js';

/** Any model id: the service decides which it accepts. */
export type TestRequestInput = Omit<z.input<typeof TestRequest>, 'ai_model'> & { ai_model?: string };

export interface PostOptions {
  /** reused across this client's retries; a fresh UUID when absent */
  idempotencyKey?: string;
  /**
   * Let a request that is on its way finish when the client's signal aborts (Ctrl-C), so the
   * caller learns what it created (a deployment's id); no retry starts after the abort.
   */
  finishOnAbort?: boolean;
}

export interface DeployOptions extends PostOptions {
  /** send `Prefer: respond-async`: answer at once with a deployment in status deploying */
  async?: boolean;
}

export interface DeployAnswer {
  deployment: Deployment;
  /** 202: the service took the asynchronous route */
  accepted: boolean;
  requestId: string;
  /** set when the service answered 422 deploy_failed with the failed deployment as data */
  error?: ErrorBody;
  /** the answer's ETag, when the service sends one: a status long-poll can start from it */
  etag?: string;
}

export interface StatusOptions {
  /** long-poll: hold the request until the deployment changes, at most this many seconds (≤ 60) */
  waitSeconds?: number;
  /** the ETag of the last answer: with `waitSeconds`, answer only when it differs */
  etag?: string;
  signal?: AbortSignal;
}

export interface StatusAnswer {
  /** undefined when the service answered 304 Not Modified */
  deployment: Deployment | undefined;
  etag: string | undefined;
  requestId: string | undefined;
}

export interface DeploymentFilter {
  mcp_id?: string;
  environment?: string;
  status?: string;
  name?: string;
}
