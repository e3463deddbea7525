/**
 * The /v1 operations of docs/api.md, each a function of its validated input. The pipeline around
 * them (auth, rate limit, body, idempotency, envelope, errors) is app.ts.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import {
  BuildRequest,
  DEPLOYMENT_ID_PATTERN,
  DEPLOYMENT_STATES,
  DeployRequest,
  ENVIRONMENTS,
  MCP_ID_PATTERN,
  TestRequest,
  type Deployment,
  type LogLine,
  type McpServer,
} from '../../api/contract.js';
import { requiredEnvVars } from '../../definition/check.js';
import { markValidated } from '../../runtime/host/bundle.js';
import type { Admission } from '../admission.js';
import type { IsolationReport } from '../isolation.js';
import type { WarmPoolStats } from '../runners/process/warm-pool.js';
import { newId } from '../ids.js';
import { resolveScaling } from '../deployments/limits.js';
import { checkBuildLimits, type EngineLimits } from '../engine-limits.js';
import type { Reply } from './respond.js';
import { prefersAsync, readBoolean, readEnum, readIfNoneMatch, readNumber, readTime } from './query.js';
import { Router } from './router.js';
import type { BuildService, DeploymentService, TestService } from '../services.js';
import type { DeploymentRecord, ServerRecord } from '../records.js';
import type { Logger } from '../engine-log.js';
import type { Store } from '../store/store.js';
import { ServiceError } from '../service-error.js';

export interface RouteContext {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  params: Record<string, string>;
  query: URLSearchParams;
  /** the body, validated against the route's schema */
  body: unknown;
  /** aborts when the client goes away */
  signal: AbortSignal;
  log: Logger;
}

export interface Route {
  /** the request body's schema; a route without one takes no body (or an empty object) */
  body?: z.ZodType;
  /** further checks of the validated body (limits the schema cannot say) */
  check?: (body: never) => Array<{ path: string; message: string }>;
  /** `Idempotency-Key` is honoured */
  idempotent?: boolean;
  /** a Reply, or 'streamed' when the route wrote the response itself */
  handle(ctx: RouteContext): Promise<Reply | 'streamed'>;
}

export interface RouteDeps {
  store: Store;
  builds: BuildService;
  deployments: DeploymentService | undefined;
  tests: TestService | undefined;
  version: string;
  limits: EngineLimits;
  clock: () => number;
  startedAt: number;
  isDraining: () => boolean;
  /** the queues of work that needs a process, for /v1/health */
  admission?: Admission | undefined;
  /** the warm runtime processes, for /v1/health */
  warmPool?: { stats(): WarmPoolStats } | undefined;
  /** what runtime processes run under, for /v1/health */
  isolation?: IsolationReport | undefined;
}

export function createRoutes(deps: RouteDeps): Router<Route> {
  const { store, builds, tests, limits, clock } = deps;
  const router = new Router<Route>();

  const requireDeployments = (): DeploymentService => {
    if (deps.deployments === undefined) {
      throw new ServiceError(
        'not_implemented',
        'deployments are not available on this engine yet; this build of mcpctl can build servers but not deploy them',
      );
    }
    return deps.deployments;
  };

  const findServer = async (mcpId: string, path?: string): Promise<ServerRecord> => {
    const record = MCP_ID_PATTERN.test(mcpId) ? await store.getServer(mcpId) : undefined;
    if (record === undefined) {
      throw new ServiceError(
        'not_found',
        `no server ${mcpId}; list them with \`mcpctl ls --servers\``,
        path === undefined ? undefined : [{ path, message: 'no server with this id' }],
      );
    }
    return record;
  };

  const findDeployment = async (deploymentId: string): Promise<DeploymentRecord> => {
    const record = DEPLOYMENT_ID_PATTERN.test(deploymentId) ? await store.getDeployment(deploymentId) : undefined;
    if (record === undefined)
      throw new ServiceError('not_found', `no deployment ${deploymentId}; list them with \`mcpctl ls\``);
    return record;
  };

  /** The live view when the deployment service runs, else the stored one. */
  const viewDeployment = async (record: DeploymentRecord): Promise<Deployment> => {
    const live =
      deps.deployments === undefined ? undefined : await deps.deployments.status(record.deployment.deployment_id);
    return live ?? record.deployment;
  };

  /**
   * Answers a deployment that was just accepted: at once with 202 when the client prefers it,
   * otherwise once it settles (200 deployed, 422 deploy_failed), or with 202 after the synchronous limit.
   */
  const settle = async (ctx: RouteContext, first: Deployment): Promise<Reply> => {
    const service = requireDeployments();
    const accepted = (d: Deployment, extra: Record<string, string> = {}): Reply => ({
      status: 202,
      data: d,
      headers: { Location: `/v1/deploy/${d.deployment_id}/status`, ...extra },
    });
    // the ETag lets a client's first long-poll start from this very version
    if (first.status === 'deploying' && prefersAsync(ctx.req))
      return accepted(first, { 'Preference-Applied': 'respond-async', ETag: etagOf(first) });
    let current = first;
    const deadline = clock() + limits.syncDeploySeconds * 1000;
    while (current.status === 'deploying' && !ctx.signal.aborted) {
      const remaining = deadline - clock();
      if (remaining <= 0) break;
      const before = clock();
      current =
        (await service.waitForChange(current.deployment_id, remaining, ctx.signal, (d) => d.status === 'deploying')) ??
        current;
      // A service that answers at once without a change must not make this loop spin.
      if (current.status === 'deploying' && clock() - before < 5) await sleep(50);
    }
    if (current.status === 'deploying') return accepted(current);
    if (current.status === 'failed') {
      throw new ServiceError(
        'deploy_failed',
        `the deployment failed: ${current.reason ?? 'no reason given'}`,
        undefined,
        current,
      );
    }
    return { status: 200, data: current };
  };

  router.add('GET', '/v1/health', {
    handle: async () => {
      const admission = deps.admission;
      return {
        status: 200,
        data: {
          status: deps.isDraining() ? 'stopping' : 'ok',
          version: deps.version,
          uptime_seconds: round((clock() - deps.startedAt) / 1000, 3),
          // how much work waits for a slot, and how much runs (docs/engine.md, admission)
          ...(admission === undefined
            ? {}
            : {
                queues: {
                  starts: admission.starts.stats(),
                  builds: admission.builds.stats(),
                  tests: admission.tests.stats(),
                },
              }),
          // runtime processes loaded and waiting for a bundle (docs/engine.md, warm pool)
          ...(deps.warmPool === undefined ? {} : { warm_pool: deps.warmPool.stats() }),
          // the process sandbox and how resources are enforced (docs/security.md)
          ...(deps.isolation === undefined ? {} : { isolation: deps.isolation }),
        },
      };
    },
  });

  // --- build ---------------------------------------------------------------------------------
  router.add('POST', '/v1/build', {
    body: BuildRequest,
    check: checkBuildLimits,
    idempotent: true,
    handle: async (ctx) => {
      // validated here, at the edge, against the contract and the limits: trusted from now on
      const record = await builds.build(markValidated(ctx.body as BuildRequest));
      return { status: 200, data: serverView(record) };
    },
  });

  router.add('GET', '/v1/servers', {
    handle: async (ctx) => {
      const name = ctx.query.get('name');
      const servers = (await store.listServers(name === null ? {} : { name })).map(serverView);
      return { status: 200, data: { servers } };
    },
  });

  router.add('GET', '/v1/servers/:mcp_id', {
    handle: async (ctx) => ({ status: 200, data: serverView(await findServer(ctx.params.mcp_id!)) }),
  });

  // --- deploy --------------------------------------------------------------------------------
  router.add('POST', '/v1/deploy', {
    body: DeployRequest,
    // The deployment service's own rule, checked here too so a bad scaling is 422 before anything starts.
    check: (request: DeployRequest) => {
      const scaling = resolveScaling(request.environment, request.config?.scaling);
      return scaling.ok ? [] : scaling.problems;
    },
    idempotent: true,
    handle: async (ctx) => {
      const request = ctx.body as DeployRequest;
      const server = await findServer(request.mcp_id, 'mcp_id');
      const service = requireDeployments();
      checkRequiredEnv(server, request);
      return settle(ctx, await service.deploy(server, request));
    },
  });

  router.add('GET', '/v1/deploy/:id/status', {
    handle: async (ctx) => {
      const record = await findDeployment(ctx.params.id!);
      const wait = readNumber(ctx.query, 'wait', { min: 0, max: limits.maxWaitSeconds, integer: false }) ?? 0;
      let current = await viewDeployment(record);
      const tag = etagOf(current);
      const baseline = readIfNoneMatch(ctx.req) ?? [tag];
      if (wait > 0 && deps.deployments !== undefined && baseline.includes(tag)) {
        const deadline = clock() + wait * 1000;
        while (!ctx.signal.aborted) {
          const remaining = deadline - clock();
          if (remaining <= 0) break;
          const before = clock();
          current =
            (await deps.deployments.waitForChange(record.deployment.deployment_id, remaining, ctx.signal, (d) =>
              baseline.includes(etagOf(d)),
            )) ?? current;
          if (!baseline.includes(etagOf(current))) break;
          if (clock() - before < 5) await sleep(50);
        }
      }
      return { status: 200, data: current, headers: { ETag: etagOf(current) } };
    },
  });

  router.add('GET', '/v1/deployments', {
    handle: async (ctx) => {
      const environment = readEnum(ctx.query, 'environment', ENVIRONMENTS);
      const status = readEnum(ctx.query, 'status', DEPLOYMENT_STATES);
      const mcpId = ctx.query.get('mcp_id') ?? undefined;
      const name = ctx.query.get('name');
      const records = await store.listDeployments({
        ...(mcpId === undefined ? {} : { mcpId }),
        ...(environment === undefined ? {} : { environment }),
        ...(name === null ? {} : { serverName: name }),
      });
      // The status filter applies to the live view, which may be newer than the stored one.
      const views = await Promise.all(records.map(viewDeployment));
      return { status: 200, data: { deployments: views.filter((d) => status === undefined || d.status === status) } };
    },
  });

  router.add('POST', '/v1/deploy/:id/stop', {
    idempotent: true,
    handle: async (ctx) => {
      const record = await findDeployment(ctx.params.id!);
      return { status: 200, data: await requireDeployments().stop(record.deployment.deployment_id) };
    },
  });

  router.add('POST', '/v1/deploy/:id/rollback', {
    idempotent: true,
    handle: async (ctx) => {
      const record = await findDeployment(ctx.params.id!);
      const service = requireDeployments();
      return settle(ctx, await service.rollback(record.deployment.deployment_id));
    },
  });

  router.add('GET', '/v1/deploy/:id/logs', {
    handle: async (ctx) => {
      const record = await findDeployment(ctx.params.id!);
      const since = readTime(ctx.query, 'since');
      const limit = readNumber(ctx.query, 'limit', { min: 1, max: 5000, integer: true }) ?? 200;
      const follow = readBoolean(ctx.query, 'follow');
      const service = requireDeployments();
      const id = record.deployment.deployment_id;
      const lines = await service.logs(id, { ...(since === undefined ? {} : { since }), limit });
      if (!follow) return { status: 200, data: { lines } };
      await streamLogs(ctx, service, id, lines, limits.keepAliveMs);
      return 'streamed';
    },
  });

  router.add('GET', '/v1/deploy/:id/metrics', {
    handle: async (ctx) => {
      const record = await findDeployment(ctx.params.id!);
      const window = readNumber(ctx.query, 'window', { min: 1, max: 86_400, integer: true }) ?? 300;
      return { status: 200, data: await requireDeployments().metrics(record.deployment.deployment_id, window) };
    },
  });

  // --- test ----------------------------------------------------------------------------------
  router.add('GET', '/v1/models', {
    handle: async () => {
      if (tests === undefined) {
        throw new ServiceError(
          'not_implemented',
          'the test agent is not available on this engine yet; use a /v1 service that offers POST /v1/test',
        );
      }
      return { status: 200, data: { models: tests.models() } };
    },
  });

  router.add('POST', '/v1/test', {
    body: TestRequest,
    idempotent: true,
    handle: async (ctx) => {
      const request = ctx.body as TestRequest;
      const server = await findServer(request.mcp_id, 'mcp_id');
      if (tests === undefined) {
        throw new ServiceError(
          'not_implemented',
          'the test agent is not available on this engine yet; use a /v1 service that offers POST /v1/test',
        );
      }
      const result = await tests.test(server, request);
      await store.putTestRun({
        id: newId('test'),
        mcpId: server.server.mcp_id,
        request,
        result,
        createdAt: new Date(clock()).toISOString(),
      });
      return { status: 200, data: result };
    },
  });

  return router;
}

/** NDJSON: the recent lines, then new ones as they come, and an empty line now and then to keep proxies from closing it. */
async function streamLogs(
  ctx: RouteContext,
  service: DeploymentService,
  id: string,
  recent: LogLine[],
  keepAliveMs: number,
): Promise<void> {
  const { res } = ctx;
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/x-ndjson; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Accel-Buffering', 'no');
  res.flushHeaders();
  for (const line of recent) res.write(`${JSON.stringify(line)}\n`);
  const keepAlive = setInterval(() => res.write('\n'), keepAliveMs);
  try {
    await service.followLogs(id, (line) => res.write(`${JSON.stringify(line)}\n`), ctx.signal);
  } finally {
    clearInterval(keepAlive);
    if (!res.writableEnded) res.end();
  }
}

/**
 * A server whose definition needs a variable the deployment does not pass could not start: the
 * deploy is refused before anything starts, naming each variable and the field that uses it.
 */
function checkRequiredEnv(server: ServerRecord, request: DeployRequest): void {
  const given = request.config?.env_vars ?? {};
  const missing = requiredEnvVars(server.definition).filter((v) => given[v.name] === undefined);
  if (missing.length === 0) return;
  throw new ServiceError(
    'validation_failed',
    `${server.server.name} needs ${missing.map((v) => v.name).join(', ')} when it starts, and the deployment does not pass ${missing.length === 1 ? 'it' : 'them'} in config.env_vars`,
    missing.map((v) => ({
      path: `config.env_vars.${v.name}`,
      message: `required by ${v.field} (no default); pass its value`,
    })),
  );
}

/**
 * The version of what a client watches: the deployment without the health checks' timestamps,
 * which change every few seconds and would wake every long-poll for nothing.
 */
export function etagOf(deployment: Deployment): string {
  const watched = {
    ...deployment,
    instances: deployment.instances?.map(({ last_check: _lastCheck, ...instance }) => instance),
  };
  return `"${createHash('sha256').update(JSON.stringify(watched)).digest('hex').slice(0, 20)}"`;
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** A built server as the API shows it: with the digest of its bundle, the tag of its image (docs/api.md). */
function serverView(record: ServerRecord): McpServer {
  return { ...record.server, auth: record.definition.auth?.type ?? 'missing', bundle_digest: record.digest };
}
