/**
 * The deployments: POST /v1/deploy, its status (a long-poll with `wait`), the list, stop, removal,
 * rollback, logs (followed as NDJSON) and metrics.
 */
import {
  DEPLOYMENT_STATES,
  DeployRequest,
  ENVIRONMENTS,
  type Deployment,
  type LogLine,
} from '../../../api/contract.js';
import { requiredEnvVars } from '../../../definition/check.js';
import { resolveScaling } from '../../deployments/limits.js';
import type { ServerRecord } from '../../records.js';
import type { DeploymentService } from '../../services.js';
import { ServiceError } from '../../service-error.js';
import {
  badQuery,
  prefersAsync,
  readBoolean,
  readEnum,
  readEnumList,
  readIfNoneMatch,
  readNumber,
  readTime,
} from '../query.js';
import { compileLogFilter, LOG_LEVELS, LogFilterError } from '../../../shared/log-filter.js';
import type { Reply } from '../respond.js';
import { findDeployment, findServer, requireDeployments, requireHousekeeping, viewDeployment } from './lookups.js';
import { etagOf, waitForDeployment } from './long-poll.js';
import { metricsSince } from './deployment-history.js';
import type { Registrar, RouteContext, RouteDeps } from './route.js';

/** The most deployments `?limit=` may ask for (without it, the list has them all). */
const LIST_MAX = 10_000;

export const registerDeployments: Registrar = (router, deps) => {
  const { store, limits } = deps;
  const service = () => requireDeployments(deps.deployments);
  const find = (ctx: RouteContext) => findDeployment(store, ctx.params.id!);

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
      const server = await findServer(store, request.mcp_id, 'mcp_id');
      const deployments = service();
      checkRequiredEnv(server, request);
      return settle(ctx, deps, await deployments.deploy(server, request));
    },
  });

  router.add('GET', '/v1/deploy/:id/status', { handle: async (ctx) => watchStatus(ctx, deps) });

  router.add('GET', '/v1/deployments', {
    handle: async (ctx) => {
      const environment = readEnum(ctx.query, 'environment', ENVIRONMENTS);
      const status = readEnumList(ctx.query, 'status', DEPLOYMENT_STATES);
      const limit = readNumber(ctx.query, 'limit', { min: 0, max: LIST_MAX, integer: true });
      const mcpId = ctx.query.get('mcp_id') ?? undefined;
      const name = ctx.query.get('name');
      const records = await store.listDeployments({
        ...(mcpId === undefined ? {} : { mcpId }),
        ...(environment === undefined ? {} : { environment }),
        ...(name === null ? {} : { serverName: name }),
      });
      // The status filter applies to the live view, which may be newer than the stored one.
      const views = await Promise.all(records.map((record) => viewDeployment(deps.deployments, record)));
      const matching = views.filter((d) => status === undefined || status.has(d.status));
      // `total` counts them all, so a page can say how many there are and show the newest few
      const deployments = limit === undefined ? matching : matching.slice(0, limit);
      return { status: 200, data: { deployments, total: matching.length } };
    },
  });

  router.add('POST', '/v1/deploy/:id/stop', {
    idempotent: true,
    handle: async (ctx) => {
      const record = await find(ctx);
      return { status: 200, data: await service().stop(record.deployment.deployment_id) };
    },
  });

  router.add('DELETE', '/v1/deploy/:id', {
    handle: async (ctx) => {
      const record = await find(ctx);
      const removed = await requireHousekeeping(deps).removeDeployment(record.deployment.deployment_id);
      return { status: 200, data: removed };
    },
  });

  router.add('POST', '/v1/deploy/:id/rollback', {
    idempotent: true,
    handle: async (ctx) => {
      const record = await find(ctx);
      const first = await service().rollback(record.deployment.deployment_id);
      const reply = await settle(ctx, deps, first);
      // settle may answer a newer view of the deployment: it is still the one the server already ran
      return first.unchanged === true ? { ...reply, data: { ...(reply.data as Deployment), unchanged: true } } : reply;
    },
  });

  router.add('GET', '/v1/deploy/:id/logs', {
    handle: async (ctx) => {
      const record = await find(ctx);
      const since = readTime(ctx.query, 'since');
      const limit = readNumber(ctx.query, 'limit', { min: 1, max: 5000, integer: true }) ?? 200;
      const follow = readBoolean(ctx.query, 'follow');
      const filter = await readLogFilter(ctx.query);
      const deployments = service();
      const id = record.deployment.deployment_id;
      const lines = await deployments.logs(id, { ...(since === undefined ? {} : { since }), limit, filter });
      if (!follow) return { status: 200, data: { lines } };
      await streamLogs(ctx, deployments, id, lines, { keepAliveMs: limits.keepAliveMs, filter });
      return 'streamed';
    },
  });

  router.add('GET', '/v1/deploy/:id/metrics', {
    handle: async (ctx) => {
      // `since`: from the history (deployment-history.ts), kept across restarts
      const past = await metricsSince(ctx, deps);
      if (past !== undefined) return past;
      const record = await find(ctx);
      const window = readNumber(ctx.query, 'window', { min: 1, max: 86_400, integer: true }) ?? 300;
      return { status: 200, data: await service().metrics(record.deployment.deployment_id, window) };
    },
  });
};

/**
 * Answers a deployment that was just accepted: at once with 202 when the client prefers it,
 * otherwise once it settles (200 deployed, 422 deploy_failed), or with 202 after the synchronous limit.
 */
async function settle(ctx: RouteContext, deps: RouteDeps, first: Deployment): Promise<Reply> {
  const service = requireDeployments(deps.deployments);
  // the ETag lets a client's first long-poll start from this very version
  if (first.status === 'deploying' && prefersAsync(ctx.req))
    return accepted(first, { 'Preference-Applied': 'respond-async', ETag: etagOf(first) });
  const current = await waitForDeployment(service, first, {
    until: (d) => d.status !== 'deploying',
    deadline: deps.clock() + deps.limits.syncDeploySeconds * 1000,
    signal: ctx.signal,
    clock: deps.clock,
  });
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
}

function accepted(deployment: Deployment, extra: Record<string, string> = {}): Reply {
  return {
    status: 202,
    data: deployment,
    headers: { Location: `/v1/deploy/${deployment.deployment_id}/status`, ...extra },
  };
}

/**
 * GET /v1/deploy/:id/status: the deployment with its ETag; with `wait`, held until it differs from
 * the version the client has (`If-None-Match`, else the current one) or the wait ends.
 */
async function watchStatus(ctx: RouteContext, deps: RouteDeps): Promise<Reply> {
  const record = await findDeployment(deps.store, ctx.params.id!);
  const wait = readNumber(ctx.query, 'wait', { min: 0, max: deps.limits.maxWaitSeconds, integer: false }) ?? 0;
  let current = await viewDeployment(deps.deployments, record);
  const tag = etagOf(current);
  const baseline = readIfNoneMatch(ctx.req) ?? [tag];
  if (wait > 0 && deps.deployments !== undefined && baseline.includes(tag)) {
    current = await waitForDeployment(deps.deployments, current, {
      until: (d) => !baseline.includes(etagOf(d)),
      deadline: deps.clock() + wait * 1000,
      signal: ctx.signal,
      clock: deps.clock,
    });
  }
  return { status: 200, data: current, headers: { ETag: etagOf(current) } };
}

/**
 * NDJSON: the recent lines, then new ones as they come, and an empty line now and then to keep
 * proxies from closing it. It ends when the deployment has ended (stopped, replaced, failed), so
 * every client sees that nothing more will come.
 */
async function streamLogs(
  ctx: RouteContext,
  service: DeploymentService,
  id: string,
  recent: LogLine[],
  { keepAliveMs, filter }: { keepAliveMs: number; filter: ((line: LogLine) => boolean) | undefined },
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
    await service.followLogs(
      id,
      (line) => {
        if (filter === undefined || filter(line)) res.write(`${JSON.stringify(line)}\n`);
      },
      ctx.signal,
    );
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

/** `level`, `grep` and `instance`: which lines a reader wants (src/shared/log-filter.ts). */
async function readLogFilter(query: URLSearchParams): Promise<((line: LogLine) => boolean) | undefined> {
  const grep = query.get('grep') ?? undefined;
  try {
    return await compileLogFilter({
      level: readEnum(query, 'level', LOG_LEVELS),
      grep,
      instance: query.get('instance') ?? undefined,
    });
  } catch (error) {
    if (error instanceof LogFilterError) throw badQuery('grep', error.message);
    throw error;
  }
}
