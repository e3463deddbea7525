/**
 * A typed client of the `/v1` contract: one method per operation. The transport under it
 * (`transport.ts`) sends with the key, timeouts and retries; `responses.ts` checks every answer
 * against the contract's zod schemas; `log-stream.ts` follows a deployment's logs.
 */
import { randomUUID } from 'node:crypto';
import { header } from './responses.js';
import {
  Deployment,
  DeploymentList,
  LogPage,
  McpServer,
  Metrics,
  ModelList,
  ServerList,
  TestResult,
  type DeployRequest,
  type LogLine,
  type ModelStatus,
  type ReloadRequest,
} from './operations.js';
import { AlertList } from './alerts.js';
import { EngineHealth } from './engine-health.js';
import { DashboardCode } from './dashboard.js';
import { TestRun, TestRunList, type TestRunSummary } from './test-runs.js';
import { ServerSource } from './server-source.js';
import { MetricsHistory, Usage } from './usage.js';
import type { BuildRequestInput } from './build-schema.js';
import { followLogStream, logQuery, type LogQuery } from './log-stream.js';
import { Transport } from './transport.js';
import type { ApiClientOptions } from './transport-options.js';

export { codeForStatus, parseRetryAfter } from './responses.js';
export {
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_RETRY,
  OPERATION_OBJECTS,
  type ApiClientOptions,
  type ApiExchange,
  type Operation,
  type RetryPolicy,
} from './transport-options.js';

export type * from './client-types.js';
import type {
  DeployAnswer,
  DeployOptions,
  DeploymentFilter,
  PostOptions,
  StatusAnswer,
  StatusOptions,
  TestRequestInput,
} from './client-types.js';

export class ApiClient {
  readonly baseUrl: string;
  private readonly transport: Transport;

  constructor(options: ApiClientOptions) {
    this.transport = new Transport(options);
    this.baseUrl = this.transport.baseUrl;
  }

  /** Closes the connections this client opened. */
  async close(): Promise<void> {
    await this.transport.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** POST /v1/build */
  async build(body: BuildRequestInput, options: PostOptions = {}): Promise<McpServer> {
    return this.transport.data(
      await this.transport.send({
        method: 'POST',
        operation: 'build',
        path: '/v1/build',
        body,
        schema: McpServer,
        ...idem(options),
      }),
    );
  }

  /**
   * POST /v1/deploy. Resolves with the deployment for 200 (deployed), 202 (deploying) and
   * 422 deploy_failed (failed, with `error`), so the caller handles every outcome the same way.
   */
  async deploy(body: DeployRequest, options: DeployOptions = {}): Promise<DeployAnswer> {
    return this.deployLike('deploy', '/v1/deploy', body, options);
  }

  /** GET /v1/deploy/{id}/status, optionally long-polling. */
  async status(deploymentId: string, options: StatusOptions = {}): Promise<StatusAnswer> {
    const wait =
      options.waitSeconds === undefined ? undefined : Math.min(60, Math.max(0, Math.ceil(options.waitSeconds)));
    const answer = await this.transport.send({
      method: 'GET',
      operation: 'status',
      path: `/v1/deploy/${encodeURIComponent(deploymentId)}/status`,
      query: { wait: wait === undefined || wait === 0 ? undefined : wait },
      headers: options.etag !== undefined && wait !== undefined && wait > 0 ? { 'if-none-match': options.etag } : {},
      schema: Deployment,
      timeoutMs: wait === undefined ? undefined : this.transport.requestTimeoutMs + wait * 1000,
      allowNotModified: true,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    return {
      deployment: answer.status === 304 ? undefined : this.transport.data(answer),
      etag: header(answer.headers, 'etag') ?? options.etag,
      requestId: answer.meta?.request_id ?? header(answer.headers, 'x-request-id'),
    };
  }

  /** POST /v1/test */
  async test(body: TestRequestInput, options: PostOptions = {}): Promise<TestResult> {
    return this.transport.data(
      await this.transport.send({
        method: 'POST',
        operation: 'test',
        path: '/v1/test',
        body,
        schema: TestResult,
        // an agent run with a real model can take a while
        timeoutMs: Math.max(this.transport.requestTimeoutMs, 180_000),
        ...idem(options),
      }),
    );
  }

  /** GET /v1/models: the test models and whether the service can run each now. */
  async models(): Promise<ModelStatus[]> {
    return this.transport.data(
      await this.transport.send({ method: 'GET', operation: 'read', path: '/v1/models', schema: ModelList }),
    ).models;
  }

  /** GET /v1/models, whole: the models, and the entries of the service's settings it could not use. */
  async modelList(): Promise<ModelList> {
    return this.transport.data(
      await this.transport.send({ method: 'GET', operation: 'read', path: '/v1/models', schema: ModelList }),
    );
  }

  /** POST /v1/engine/reload: the service reads its model settings again (and takes `env`'s keys); its models. */
  async reloadEngine(body: ReloadRequest = {}): Promise<ModelList> {
    return this.transport.data(
      await this.transport.send({
        method: 'POST',
        operation: 'read',
        path: '/v1/engine/reload',
        body,
        schema: ModelList,
      }),
    );
  }

  /** GET /v1/health: whether the service answers, and the records it could not read. */
  async health(): Promise<EngineHealth> {
    return this.transport.data(
      await this.transport.send({ method: 'GET', operation: 'read', path: '/v1/health', schema: EngineHealth }),
    );
  }

  /** GET /v1/servers */
  async listServers(filter: { name?: string } = {}): Promise<McpServer[]> {
    return this.transport.data(
      await this.transport.send({
        method: 'GET',
        operation: 'list',
        path: '/v1/servers',
        query: { ...filter },
        schema: ServerList,
      }),
    ).servers;
  }

  /** GET /v1/servers/{mcp_id} */
  async getServer(mcpId: string): Promise<McpServer> {
    return this.transport.data(
      await this.transport.send({
        method: 'GET',
        operation: 'read',
        path: `/v1/servers/${encodeURIComponent(mcpId)}`,
        schema: McpServer,
      }),
    );
  }

  /** GET /v1/servers/{mcp_id}/definition, the part that says which file the server was built from. */
  async serverSource(mcpId: string): Promise<ServerSource> {
    const path = `/v1/servers/${encodeURIComponent(mcpId)}/definition`;
    return this.transport.data(
      await this.transport.send({ method: 'GET', operation: 'read', path, schema: ServerSource }),
    );
  }

  /** GET /v1/deployments */
  async listDeployments(filter: DeploymentFilter = {}): Promise<Deployment[]> {
    return this.transport.data(
      await this.transport.send({
        method: 'GET',
        operation: 'list',
        path: '/v1/deployments',
        query: { ...filter },
        schema: DeploymentList,
      }),
    ).deployments;
  }

  /** POST /v1/deploy/{id}/stop */
  async stop(deploymentId: string, options: PostOptions = {}): Promise<Deployment> {
    return this.transport.data(
      await this.transport.send({
        method: 'POST',
        operation: 'stop',
        path: `/v1/deploy/${encodeURIComponent(deploymentId)}/stop`,
        schema: Deployment,
        ...idem(options),
      }),
    );
  }

  /** DELETE /v1/deploy/{id}: removes a stopped or failed deployment; answers it as it was */
  async removeDeployment(deploymentId: string): Promise<Deployment> {
    const path = `/v1/deploy/${encodeURIComponent(deploymentId)}`;
    return this.transport.data(
      await this.transport.send({ method: 'DELETE', operation: 'remove', path, schema: Deployment }),
    );
  }

  /** DELETE /v1/servers/{mcp_id}: removes a build no deployment runs; answers it as it was */
  async removeServer(mcpId: string): Promise<McpServer> {
    const path = `/v1/servers/${encodeURIComponent(mcpId)}`;
    return this.transport.data(
      await this.transport.send({ method: 'DELETE', operation: 'remove', path, schema: McpServer }),
    );
  }

  /** POST /v1/deploy/{id}/rollback: the new deployment, answered like a deploy. */
  async rollback(deploymentId: string, options: DeployOptions = {}): Promise<DeployAnswer> {
    return this.deployLike('rollback', `/v1/deploy/${encodeURIComponent(deploymentId)}/rollback`, undefined, options);
  }

  /** GET /v1/deploy/{id}/logs */
  async logs(deploymentId: string, options: LogQuery = {}): Promise<LogLine[]> {
    return this.transport.data(
      await this.transport.send({
        method: 'GET',
        operation: 'logs',
        path: `/v1/deploy/${encodeURIComponent(deploymentId)}/logs`,
        query: logQuery(options),
        schema: LogPage,
      }),
    ).lines;
  }

  /** GET /v1/deploy/{id}/metrics */
  async metrics(deploymentId: string, windowSeconds?: number): Promise<Metrics> {
    return this.transport.data(
      await this.transport.send({
        method: 'GET',
        operation: 'metrics',
        path: `/v1/deploy/${encodeURIComponent(deploymentId)}/metrics`,
        query: { window: windowSeconds },
        schema: Metrics,
      }),
    );
  }

  /** GET /v1/deploy/{id}/metrics?since=: the history, as at most `points` points plus totals */
  async metricsHistory(deploymentId: string, since: string, points?: number): Promise<MetricsHistory> {
    return this.transport.data(
      await this.transport.send({
        method: 'GET',
        operation: 'metrics',
        path: `/v1/deploy/${encodeURIComponent(deploymentId)}/metrics`,
        query: { since, points },
        schema: MetricsHistory,
      }),
    );
  }

  /** GET /v1/deploy/{id}/usage: calls per tool, client, user and day */
  async usage(deploymentId: string, since?: string): Promise<Usage> {
    return this.transport.data(
      await this.transport.send({
        method: 'GET',
        operation: 'metrics',
        path: `/v1/deploy/${encodeURIComponent(deploymentId)}/usage`,
        query: { since },
        schema: Usage,
      }),
    );
  }

  /** POST /v1/dashboard/codes: a one-time code (and the page's URL with it) that logs a browser in */
  async dashboardCode(): Promise<DashboardCode> {
    return this.transport.data(
      await this.transport.send({
        method: 'POST',
        operation: 'read',
        path: '/v1/dashboard/codes',
        schema: DashboardCode,
      }),
    );
  }

  /** GET /v1/alerts: firing and recent alerts, of one deployment when given */
  async alerts(deploymentId?: string): Promise<AlertList> {
    return this.transport.data(
      await this.transport.send({
        method: 'GET',
        operation: 'read',
        path: '/v1/alerts',
        query: { deployment: deploymentId },
        schema: AlertList,
      }),
    );
  }

  /** GET /v1/tests: the kept runs of POST /v1/test, newest first, of one server when given */
  async testRuns(filter: { mcpId?: string; limit?: number } = {}): Promise<TestRunSummary[]> {
    return this.transport.data(
      await this.transport.send({
        method: 'GET',
        operation: 'list',
        path: '/v1/tests',
        query: { mcp_id: filter.mcpId, limit: filter.limit },
        schema: TestRunList,
      }),
    ).runs;
  }

  /** GET /v1/tests/{test_id}: one kept run, with its request and result */
  async testRun(testId: string): Promise<TestRun> {
    return this.transport.data(
      await this.transport.send({
        method: 'GET',
        operation: 'read',
        path: `/v1/tests/${encodeURIComponent(testId)}`,
        schema: TestRun,
      }),
    );
  }

  private async deployLike(
    operation: 'deploy' | 'rollback',
    path: string,
    body: unknown,
    options: DeployOptions,
  ): Promise<DeployAnswer> {
    const answer = await this.transport.send({
      method: 'POST',
      operation,
      path,
      body,
      schema: Deployment,
      headers: options.async === true ? { prefer: 'respond-async' } : {},
      // a synchronous deploy answers within 120 s (docs/api.md, limits)
      timeoutMs: options.async === true ? undefined : Math.max(this.transport.requestTimeoutMs, 135_000),
      acceptError: (status, error) => status === 422 && error?.code === 'deploy_failed',
      ...idem(options),
    });
    const deployment = this.transport.data(answer);
    return {
      deployment,
      accepted: answer.status === 202,
      requestId: answer.meta?.request_id ?? '',
      ...(answer.error === undefined ? {} : { error: answer.error }),
      ...(header(answer.headers, 'etag') === undefined ? {} : { etag: header(answer.headers, 'etag')! }),
    };
  }

  /**
   * GET /v1/deploy/{id}/logs?follow=1: calls `onLine` for every log line of the NDJSON stream
   * until the stream ends or `signal` aborts (then it resolves quietly).
   */
  async followLogs(
    deploymentId: string,
    onLine: (line: LogLine) => void,
    signal?: AbortSignal,
    options: LogQuery = {},
  ): Promise<void> {
    await followLogStream(this.transport, deploymentId, onLine, signal, options);
  }
}

function idem(options: PostOptions): { idempotencyKey: string; finishOnAbort?: boolean } {
  return {
    idempotencyKey: options.idempotencyKey ?? randomUUID(),
    ...(options.finishOnAbort === true ? { finishOnAbort: true } : {}),
  };
}
