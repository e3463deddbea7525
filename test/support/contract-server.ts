/**
 * An in-memory `/v1` service on 127.0.0.1 that follows docs/api.md, for tests of the client and
 * the CLI: envelope, auth, validation with the contract's schemas, idempotency, build, deploy
 * (synchronous, or asynchronous with a deployment that moves deploying → deployed), long-poll
 * status with ETag, test with a scripted agent, list/stop/rollback/logs/metrics.
 *
 * It can be told to fail: any status with an error body, 429 with Retry-After, a dropped
 * connection, a slow answer, or a raw body that breaks the contract.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { z } from 'zod';
import {
  BuildRequest,
  DeployRequest,
  TestRequest,
  type Deployment,
  type DeployRequest as DeployRequestType,
  type ErrorDetail,
  type LogLine,
  type McpServer,
  type ModelStatus,
  type TestResult,
} from '../../src/api/contract.js';
import { listen } from './http.js';

export type Failure =
  | { type: 'status'; status: number; code?: string; message?: string; details?: ErrorDetail[]; retryAfter?: string; data?: unknown }
  /** reads the request, then destroys the socket without answering */
  | { type: 'drop' }
  /** waits, then answers normally */
  | { type: 'slow'; ms: number }
  /** does the work at once, and sends its answer only after a while (or never, if the client left) */
  | { type: 'late'; ms: number }
  /** answers this exact body (to break the contract) */
  | { type: 'raw'; status: number; body: string; contentType?: string };

export interface Injection {
  method?: string;
  /** a path prefix or a pattern; any path when absent */
  path?: string | RegExp;
  /** how many requests it applies to; every one when absent */
  times?: number;
  failure: Failure;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: unknown;
}

export interface ContractServerOptions {
  apiKey?: string;
  /**
   * How an asynchronous deployment moves: `timer` every `stepMs`; `polls` one step per status
   * request, answering at once whatever `wait` says (a service that does not long-poll); `hold`
   * never (stays deploying).
   */
  progress?: 'timer' | 'polls' | 'hold';
  /**
   * Settle a deployment right after a status read without `wait` has answered: the state changes
   * between a client's read and its next long-poll.
   */
  settleAfterRead?: boolean;
  stepMs?: number;
  /** how deployments end */
  outcome?: 'deployed' | 'failed';
  /** answer deploys synchronously even with Prefer: respond-async */
  ignoreAsync?: boolean;
  /** the scripted agent */
  agent?: (request: z.infer<typeof TestRequest>, server: StoredServer) => TestResult;
  /** what GET /v1/models answers; every model available when absent */
  models?: ModelStatus[];
}

const DEFAULT_MODELS: ModelStatus[] = [
  { id: 'mcpctl-local', default: true, available: true },
  { id: 'claude-sonnet-4-5', available: true, key_variable: 'ANTHROPIC_API_KEY' },
  { id: 'gpt-4.1-mini', available: true, key_variable: 'OPENAI_API_KEY' },
];

export interface StoredServer {
  server: McpServer;
  request: z.infer<typeof BuildRequest>;
}

interface StoredDeployment {
  deployment: Deployment;
  version: number;
  step: number;
  config: DeployRequestType['config'];
  timer?: NodeJS.Timeout;
  logs: LogLine[];
}

interface Waiter {
  id: string;
  resolve: () => void;
}

const INSTANCE_BOUNDS = {
  development: { min: 1, max: 1, defMin: 1, defMax: 1 },
  staging: { min: 1, max: 2, defMin: 1, defMax: 2 },
  production: { min: 2, max: 8, defMin: 2, defMax: 4 },
} as const;

function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const part of path) out += typeof part === 'number' ? `[${part}]` : out === '' ? String(part) : `.${String(part)}`;
  return out;
}

function id(prefix: string): string {
  return `${prefix}${randomBytes(6).toString('hex')}`;
}

export class ContractServer {
  readonly apiKey: string;
  url = '';
  readonly requests: RecordedRequest[] = [];
  /** long-polls that sat out their whole `wait` because nothing changed */
  expiredWaits = 0;
  readonly servers = new Map<string, StoredServer>();
  readonly deployments = new Map<string, StoredDeployment>();
  options: ContractServerOptions;
  private readonly http: Server;
  private readonly sockets = new Set<Socket>();
  private injections: Injection[] = [];
  private waiters: Waiter[] = [];
  private readonly idempotent = new Map<string, { hash: string; status: number; body: unknown; headers: Record<string, string> }>();
  private readonly streams = new Set<ServerResponse>();

  constructor(options: ContractServerOptions = {}) {
    this.options = options;
    this.apiKey = options.apiKey ?? `test-key-${randomBytes(8).toString('hex')}`;
    this.http = createServer((req, res) => void this.handle(req, res));
    this.http.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  async listen(): Promise<this> {
    this.url = (await listen(this.http)).url;
    return this;
  }

  /** Makes matching requests fail, before auth and routing. */
  inject(injection: Injection): void {
    this.injections.push({ ...injection });
  }

  clearInjections(): void {
    this.injections = [];
  }

  /** Requests to a path (after the query string is removed), optionally of one method. */
  requestsTo(path: string | RegExp, method?: string): RecordedRequest[] {
    return this.requests.filter((r) => (method === undefined || r.method === method) && (typeof path === 'string' ? r.path === path : path.test(r.path)));
  }

  /** Adds a log line to a deployment and to every open follow stream of it. */
  emitLog(deploymentId: string, line: LogLine): void {
    const stored = this.deployments.get(deploymentId);
    if (stored === undefined) return;
    stored.logs.push(line);
    for (const res of this.streams)
      if ((res as ServerResponse & { deploymentId?: string }).deploymentId === deploymentId) res.write(`${JSON.stringify(line)}\n`);
  }

  async close(): Promise<void> {
    for (const stored of this.deployments.values()) clearTimeout(stored.timer);
    for (const waiter of this.waiters) waiter.resolve();
    this.waiters = [];
    for (const res of this.streams) res.end();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // --- plumbing -----------------------------------------------------------------------------

  private send(res: ServerResponse, status: number, data: unknown, extra: { error?: unknown; headers?: Record<string, string> } = {}): void {
    const requestId = id('req_');
    const body = {
      success: extra.error === undefined && status < 400,
      data,
      meta: { request_id: requestId, timestamp: new Date().toISOString() },
      ...(extra.error === undefined ? {} : { error: extra.error }),
    };
    res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': requestId, ...extra.headers });
    res.end(JSON.stringify(body));
  }

  private fail(
    res: ServerResponse,
    status: number,
    code: string,
    message: string,
    options: { details?: ErrorDetail[]; data?: unknown; headers?: Record<string, string> } = {},
  ): void {
    this.send(res, status, options.data ?? null, {
      error: { code, message, ...(options.details === undefined ? {} : { details: options.details }) },
      ...(options.headers === undefined ? {} : { headers: options.headers }),
    });
  }

  private takeInjection(method: string, path: string): Failure | undefined {
    for (const injection of this.injections) {
      if (injection.method !== undefined && injection.method !== method) continue;
      if (injection.path !== undefined && !(typeof injection.path === 'string' ? path.startsWith(injection.path) : injection.path.test(path))) continue;
      if (injection.times !== undefined) {
        if (injection.times <= 0) continue;
        injection.times -= 1;
      }
      return injection.failure;
    }
    return undefined;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    let badJson = false;
    if (text !== '') {
      try {
        body = JSON.parse(text);
      } catch {
        badJson = true;
      }
    }
    const method = req.method ?? 'GET';
    this.requests.push({ method, path: url.pathname, query: url.searchParams, headers: req.headers, body });

    const failure = this.takeInjection(method, url.pathname);
    if (failure !== undefined) {
      switch (failure.type) {
        case 'drop':
          req.socket.destroy();
          return;
        case 'slow':
          await new Promise((resolve) => setTimeout(resolve, failure.ms));
          if (res.destroyed) return;
          break;
        case 'late': {
          const end = res.end.bind(res);
          res.end = ((chunk?: unknown) => {
            setTimeout(() => {
              if (!res.destroyed) end(chunk as string);
            }, failure.ms);
            return res;
          }) as typeof res.end;
          break;
        }
        case 'raw':
          res.writeHead(failure.status, { 'content-type': failure.contentType ?? 'application/json' });
          res.end(failure.body);
          return;
        case 'status':
          this.fail(res, failure.status, failure.code ?? 'internal', failure.message ?? `injected ${failure.status}`, {
            ...(failure.details === undefined ? {} : { details: failure.details }),
            ...(failure.data === undefined ? {} : { data: failure.data }),
            ...(failure.retryAfter === undefined ? {} : { headers: { 'retry-after': failure.retryAfter } }),
          });
          return;
      }
    }

    if (req.headers.authorization !== `Bearer ${this.apiKey}`) {
      this.fail(res, 401, 'unauthorized', 'missing or wrong API key');
      return;
    }
    if (method === 'POST' && text !== '' && !(req.headers['content-type'] ?? '').startsWith('application/json')) {
      this.fail(res, 415, 'unsupported_media_type', 'a body must be sent with Content-Type: application/json');
      return;
    }
    if (badJson) {
      this.fail(res, 400, 'invalid_json', 'the body is not JSON');
      return;
    }

    const key = req.headers['idempotency-key'];
    if (method === 'POST' && typeof key === 'string') {
      const hash = createHash('sha256').update(`${url.pathname}\n${text}`).digest('hex');
      const stored = this.idempotent.get(key);
      if (stored !== undefined) {
        if (stored.hash !== hash) {
          this.fail(res, 422, 'idempotency_mismatch', 'this Idempotency-Key was used with another request');
          return;
        }
        res.writeHead(stored.status, { ...stored.headers, 'idempotent-replayed': 'true' });
        res.end(JSON.stringify(stored.body));
        return;
      }
      // Capture the answer to replay it.
      const writeHead = res.writeHead.bind(res);
      const end = res.end.bind(res);
      let status = 200;
      let headers: Record<string, string> = {};
      res.writeHead = ((code: number, h?: Record<string, string>) => {
        status = code;
        headers = h ?? {};
        return writeHead(code, h);
      }) as typeof res.writeHead;
      res.end = ((chunk?: unknown) => {
        // like the engine: only final answers are replayed (not 5xx, 429 or 409)
        if (typeof chunk === 'string' && status < 500 && status !== 429 && status !== 409)
          this.idempotent.set(key, { hash, status, body: JSON.parse(chunk), headers });
        return end(chunk as string);
      }) as typeof res.end;
    }

    try {
      await this.route(method, url, body, req, res);
    } catch (error) {
      if (!res.headersSent) this.fail(res, 500, 'internal', error instanceof Error ? error.message : String(error));
    }
  }

  private invalid(res: ServerResponse, error: z.ZodError, prefix: ReadonlyArray<PropertyKey> = []): void {
    const details = error.issues.flatMap((issue) =>
      issue.code === 'unrecognized_keys'
        ? issue.keys.map((k) => ({ path: formatPath([...prefix, ...issue.path, k]), message: `unknown field "${k}"` }))
        : [{ path: formatPath([...prefix, ...issue.path]), message: issue.message }],
    );
    this.fail(res, 422, 'validation_failed', `the request has ${details.length === 1 ? 'a problem' : `${details.length} problems`}`, { details });
  }

  private async route(method: string, url: URL, body: unknown, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = url.pathname;
    const routes: Array<[string, RegExp, (m: RegExpMatchArray) => Promise<void> | void]> = [
      ['GET', /^\/v1\/health$/, () => this.send(res, 200, { status: 'ok', version: 'contract-server', uptime_seconds: 1 })],
      ['POST', /^\/v1\/build$/, () => this.build(body, res)],
      ['POST', /^\/v1\/deploy$/, () => this.deploy(body, req, res)],
      ['GET', /^\/v1\/deploy\/([^/]+)\/status$/, (m) => this.status(m[1]!, url, req, res)],
      ['POST', /^\/v1\/deploy\/([^/]+)\/stop$/, (m) => this.stop(m[1]!, res)],
      ['POST', /^\/v1\/deploy\/([^/]+)\/rollback$/, (m) => this.rollback(m[1]!, req, res)],
      ['GET', /^\/v1\/deploy\/([^/]+)\/logs$/, (m) => this.logs(m[1]!, url, req, res)],
      ['GET', /^\/v1\/deploy\/([^/]+)\/metrics$/, (m) => this.metrics(m[1]!, url, res)],
      ['POST', /^\/v1\/test$/, () => this.test(body, res)],
      ['GET', /^\/v1\/models$/, () => this.send(res, 200, { models: this.options.models ?? DEFAULT_MODELS })],
      ['GET', /^\/v1\/servers$/, () => this.listServers(url, res)],
      ['GET', /^\/v1\/servers\/([^/]+)$/, (m) => this.getServer(m[1]!, res)],
      ['GET', /^\/v1\/deployments$/, () => this.listDeployments(url, res)],
    ];
    const matching = routes.filter(([, pattern]) => pattern.test(path));
    const route = matching.find(([m]) => m === method);
    if (route === undefined) {
      if (matching.length > 0) {
        this.fail(res, 405, 'method_not_allowed', `${method} is not allowed here`, { headers: { allow: matching.map(([m]) => m).join(', ') } });
      } else this.fail(res, 404, 'not_found', `no route ${method} ${path}`);
      return;
    }
    await route[2](path.match(route[1])!);
  }

  // --- operations ---------------------------------------------------------------------------

  private build(body: unknown, res: ServerResponse): void {
    const parsed = BuildRequest.safeParse(body);
    if (!parsed.success) return this.invalid(res, parsed.error);
    const request = parsed.data;
    // Content-addressed: an identical definition is the same server.
    const digest = createHash('sha256').update(JSON.stringify(request)).digest('hex').slice(0, 12);
    const mcpId = `mcp_${digest}`;
    const existing = this.servers.get(mcpId);
    if (existing !== undefined) return this.send(res, 200, { ...existing.server, build_time: 0.001, reused: true });
    const server: McpServer = {
      mcp_id: mcpId,
      name: request.name,
      status: 'ready',
      url: `${this.url}/v1/servers/${mcpId}`,
      build_time: 0.012,
      template: request.template,
      version: request.version ?? '0.1.0',
      created_at: new Date().toISOString(),
      tools: request.tools?.length ?? 0,
      resources: request.resources?.length ?? 0,
      prompts: request.prompts?.length ?? 0,
    };
    this.servers.set(mcpId, { server, request });
    this.send(res, 200, server);
  }

  private deploy(body: unknown, req: IncomingMessage, res: ServerResponse): void {
    const parsed = DeployRequest.safeParse(body);
    if (!parsed.success) return this.invalid(res, parsed.error);
    const request = parsed.data;
    const stored = this.servers.get(request.mcp_id);
    if (stored === undefined) return this.fail(res, 404, 'not_found', `no server ${request.mcp_id}`);
    const bounds = INSTANCE_BOUNDS[request.environment];
    const min = request.config?.scaling?.min_instances ?? bounds.defMin;
    const max = request.config?.scaling?.max_instances ?? bounds.defMax;
    const details: ErrorDetail[] = [];
    if (min < bounds.min || min > bounds.max) {
      details.push({ path: 'config.scaling.min_instances', message: `must be from ${bounds.min} to ${bounds.max} in ${request.environment}` });
    }
    if (max < bounds.min || max > bounds.max) {
      details.push({ path: 'config.scaling.max_instances', message: `must be from ${bounds.min} to ${bounds.max} in ${request.environment}` });
    }
    if (details.length === 0 && min > max) details.push({ path: 'config.scaling', message: 'min_instances must not exceed max_instances' });
    if (details.length > 0) return this.fail(res, 422, 'validation_failed', 'the scaling is out of bounds', { details });

    const deploymentId = id('deploy_');
    const now = new Date().toISOString();
    const deployment: Deployment = {
      deployment_id: deploymentId,
      status: 'deploying',
      url: `${this.url}/d/${deploymentId}`,
      health_check: `${this.url}/d/${deploymentId}/health`,
      deploy_time: null,
      mcp_id: request.mcp_id,
      environment: request.environment,
      stage: `starting instances 0/${min}`,
      desired_instances: min,
      instances: Array.from({ length: min }, (_, i) => ({ id: `i${i + 1}`, state: 'starting', restarts: 0 })),
      ...(request.config?.domain === undefined ? {} : { domain: request.config.domain }),
      notices: request.environment === 'production' ? ['single machine: instances run on this host only, not across regions'] : [],
      created_at: now,
      updated_at: now,
      transitions: [{ status: 'deploying', at: now }],
    };
    const record: StoredDeployment = {
      deployment,
      version: 1,
      step: 0,
      config: request.config,
      logs: [{ time: now, level: 'info', message: `deployment ${deploymentId} created` }],
    };
    this.deployments.set(deploymentId, record);
    const wantsAsync = /respond-async/.test(String(req.headers.prefer ?? '')) && this.options.ignoreAsync !== true;
    if (!wantsAsync) {
      while (record.deployment.status === 'deploying') this.advance(record);
      return this.answerDeployment(res, record, 200);
    }
    if ((this.options.progress ?? 'timer') === 'timer') this.schedule(record);
    this.send(res, 202, deployment, {
      headers: { 'preference-applied': 'respond-async', location: `/v1/deploy/${deploymentId}/status`, etag: `"${record.version}"` },
    });
  }

  private answerDeployment(res: ServerResponse, record: StoredDeployment, status: number): void {
    if (record.deployment.status === 'failed') {
      this.fail(res, 422, 'deploy_failed', record.deployment.reason ?? 'the deployment failed', { data: record.deployment });
    } else this.send(res, status, record.deployment, { headers: { etag: `"${record.version}"` } });
  }

  private schedule(record: StoredDeployment): void {
    record.timer = setTimeout(() => {
      this.advance(record);
      if (record.deployment.status === 'deploying') this.schedule(record);
    }, this.options.stepMs ?? 40);
  }

  /** One step of a deployment: instances start, health checks pass, it settles. */
  private advance(record: StoredDeployment): void {
    const d = record.deployment;
    if (d.status !== 'deploying') return;
    const now = new Date().toISOString();
    record.step += 1;
    if (record.step === 1) {
      d.stage = 'health checks';
      d.instances = (d.instances ?? []).map((i, n) => ({ ...i, state: n === 0 ? 'healthy' : 'starting', port: 40000 + n, pid: 5000 + n }));
    } else if ((this.options.outcome ?? 'deployed') === 'failed') {
      d.status = 'failed';
      d.reason = 'instance i1 exited with code 1 before its health check passed';
      d.stage = 'failed';
      d.deploy_time = 0.08;
      d.transitions = [...(d.transitions ?? []), { status: 'failed', at: now, reason: d.reason }];
    } else {
      d.status = 'deployed';
      d.stage = 'running';
      d.deploy_time = 0.08;
      d.instances = (d.instances ?? []).map((i) => ({ ...i, state: 'healthy', last_check: now }));
      d.transitions = [...(d.transitions ?? []), { status: 'deployed', at: now }];
    }
    d.updated_at = now;
    this.bump(record);
  }

  private bump(record: StoredDeployment): void {
    record.version += 1;
    const id = record.deployment.deployment_id;
    const ready = this.waiters.filter((w) => w.id === id);
    this.waiters = this.waiters.filter((w) => w.id !== id);
    for (const waiter of ready) waiter.resolve();
  }

  private async status(deploymentId: string, url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const record = this.deployments.get(deploymentId);
    if (record === undefined) return this.fail(res, 404, 'not_found', `no deployment ${deploymentId}`);
    const waitText = url.searchParams.get('wait');
    let wait = 0;
    if (waitText !== null) {
      wait = Number(waitText);
      if (!Number.isFinite(wait) || wait < 0 || wait > 60) return this.fail(res, 400, 'bad_request', 'wait must be a number of seconds from 0 to 60');
    }
    const mode = this.options.progress ?? 'timer';
    if (mode === 'polls') {
      this.advance(record);
    } else if (wait > 0) {
      const etag = req.headers['if-none-match'];
      const current = `"${record.version}"`;
      if (etag === undefined || etag === current) {
        await new Promise<void>((resolve) => {
          const waiter: Waiter = { id: deploymentId, resolve };
          this.waiters.push(waiter);
          const timer = setTimeout(() => {
            this.waiters = this.waiters.filter((w) => w !== waiter);
            this.expiredWaits += 1;
            resolve();
          }, wait * 1000);
          res.on('close', () => {
            clearTimeout(timer);
            this.waiters = this.waiters.filter((w) => w !== waiter);
            resolve();
          });
        });
        if (res.destroyed) return;
      }
    }
    this.send(res, 200, record.deployment, { headers: { etag: `"${record.version}"` } });
    if (this.options.settleAfterRead === true && wait === 0) {
      this.advance(record);
      this.advance(record);
    }
  }

  private stop(deploymentId: string, res: ServerResponse): void {
    const record = this.deployments.get(deploymentId);
    if (record === undefined) return this.fail(res, 404, 'not_found', `no deployment ${deploymentId}`);
    if (record.deployment.status !== 'deployed') {
      return this.fail(res, 409, 'conflict', `deployment ${deploymentId} is ${record.deployment.status}; only a deployed one can be stopped`);
    }
    const now = new Date().toISOString();
    const d = record.deployment;
    d.status = 'stopped';
    d.stage = 'stopped';
    d.reason = 'stopped on request';
    d.instances = [];
    d.updated_at = now;
    d.transitions = [...(d.transitions ?? []), { status: 'stopped', at: now, reason: 'stopped on request' }];
    this.bump(record);
    this.send(res, 200, d);
  }

  private rollback(deploymentId: string, req: IncomingMessage, res: ServerResponse): void {
    const record = this.deployments.get(deploymentId);
    if (record === undefined) return this.fail(res, 404, 'not_found', `no deployment ${deploymentId}`);
    const name = this.servers.get(record.deployment.mcp_id ?? '')?.server.name;
    const previous = [...this.deployments.values()]
      .filter(
        (r) =>
          r !== record &&
          r.deployment.environment === record.deployment.environment &&
          this.servers.get(r.deployment.mcp_id ?? '')?.server.name === name &&
          (r.deployment.status === 'deployed' || r.deployment.status === 'stopped') &&
          (r.deployment.created_at ?? '') <= (record.deployment.created_at ?? ''),
      )
      .at(-1);
    if (previous === undefined) return this.fail(res, 409, 'conflict', `there is no earlier deployment of ${name ?? 'this server'} to roll back to`);
    this.deploy(
      {
        mcp_id: previous.deployment.mcp_id,
        environment: previous.deployment.environment,
        ...(previous.config === undefined ? {} : { config: previous.config }),
      },
      req,
      res,
    );
  }

  private logs(deploymentId: string, url: URL, req: IncomingMessage, res: ServerResponse): void {
    const record = this.deployments.get(deploymentId);
    if (record === undefined) return this.fail(res, 404, 'not_found', `no deployment ${deploymentId}`);
    const limit = Number(url.searchParams.get('limit') ?? 200);
    const lines = record.logs.slice(-limit);
    if (url.searchParams.get('follow') === '1') {
      res.writeHead(200, { 'content-type': 'application/x-ndjson', 'x-request-id': id('req_') });
      for (const line of lines) res.write(`${JSON.stringify(line)}\n`);
      const stream = Object.assign(res, { deploymentId });
      this.streams.add(stream);
      req.on('close', () => this.streams.delete(stream));
      return;
    }
    this.send(res, 200, { lines });
  }

  private metrics(deploymentId: string, url: URL, res: ServerResponse): void {
    const record = this.deployments.get(deploymentId);
    if (record === undefined) return this.fail(res, 404, 'not_found', `no deployment ${deploymentId}`);
    const window = Number(url.searchParams.get('window') ?? 300);
    this.send(res, 200, {
      deployment_id: deploymentId,
      window_seconds: window,
      requests: 0,
      throughput_rps: 0,
      latency_ms: { p50: null, p95: null, p99: null },
      tool_calls: 0,
      tool_errors: 0,
      tool_error_rate: null,
      per_tool: {},
      series: [],
    });
  }

  private test(body: unknown, res: ServerResponse): void {
    const parsed = TestRequest.safeParse(body);
    if (!parsed.success) return this.invalid(res, parsed.error);
    const stored = this.servers.get(parsed.data.mcp_id);
    if (stored === undefined) return this.fail(res, 404, 'not_found', `no server ${parsed.data.mcp_id}`);
    const result = (this.options.agent ?? scriptedAgent)(parsed.data, stored);
    this.send(res, 200, result);
  }

  private listServers(url: URL, res: ServerResponse): void {
    const name = url.searchParams.get('name');
    const servers = [...this.servers.values()].map((s) => s.server).filter((s) => name === null || s.name === name);
    this.send(res, 200, { servers: servers.reverse() });
  }

  private getServer(mcpId: string, res: ServerResponse): void {
    const stored = this.servers.get(mcpId);
    if (stored === undefined) return this.fail(res, 404, 'not_found', `no server ${mcpId}`);
    this.send(res, 200, stored.server);
  }

  private listDeployments(url: URL, res: ServerResponse): void {
    const q = url.searchParams;
    const deployments = [...this.deployments.values()]
      .map((r) => r.deployment)
      .filter(
        (d) =>
          (q.get('mcp_id') === null || d.mcp_id === q.get('mcp_id')) &&
          (q.get('environment') === null || d.environment === q.get('environment')) &&
          (q.get('status') === null || d.status === q.get('status')) &&
          (q.get('name') === null || this.servers.get(d.mcp_id ?? '')?.server.name === q.get('name')),
      );
    this.send(res, 200, { deployments: deployments.reverse() });
  }
}

/**
 * The default agent: calls every tool whose name appears in the message (or the first tool),
 * reads every resource whose URI appears in it, and reports all calls as successful.
 */
export function scriptedAgent(request: z.infer<typeof TestRequest>, stored: StoredServer): TestResult {
  const tools = stored.request.tools ?? [];
  const named = tools.filter((t) => request.message.includes(t.name)).map((t) => t.name);
  const used = named.length > 0 ? named : tools.slice(0, 1).map((t) => t.name);
  const resources = (stored.request.resources ?? []).filter((r) => request.message.includes(r.uri)).map((r) => r.uri);
  return {
    ai_response: `Scripted reply to: ${request.message}`,
    tools_used: used,
    resources_accessed: resources,
    execution_time: 0.05,
    success_rate: 1,
    ai_model: request.ai_model,
    tool_calls: used.map((name) => ({ name, ok: true, duration_ms: 3 })),
  };
}

export async function startContractServer(options: ContractServerOptions = {}): Promise<ContractServer> {
  return new ContractServer(options).listen();
}
