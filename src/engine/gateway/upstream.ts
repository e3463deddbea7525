/**
 * What the gateway sees of a deployment (the Upstream) and its implementation over a
 * LiveDeployment: which instance takes a request (a session's own instance, else the healthy one
 * with the fewest requests in flight), what became of the call (metrics, the development log),
 * and which sessions live on which instance.
 */
import type { RequestEvent } from '../observability/events.js';
import type { IncomingMessage } from 'node:http';
import type { RequestSpan } from '../observability/tracing.js';
import type { DeploymentState, LogLine } from '../../api/contract.js';
import { resolveEnvRefs } from '../../definition/interpolate.js';
import { createGuard, resolveAuth, type Guard } from '../../runtime/server/auth.js';
import { deploymentAudiences } from '../deployments/addresses.js';
import type { LiveDeployment } from '../deployments/live-deployment.js';
import type { McpRequestInfo } from './mcp-messages.js';
import type { RequestSample } from '../deployments/samples.js';
import { Sessions } from './session-table.js';

/** A request as the gateway picks an instance for it. */
export interface PickRequest {
  /** its Mcp-Session-Id */
  session?: string;
  /** the HTTP method */
  method?: string;
  /** the source address it came from (sourceKey), which the sessions it opens count for */
  client?: string;
  /** it is an `initialize` without a session: it opens one */
  opens?: boolean;
  /** an `initialize`: the client it names (clientInfo), remembered with the session it opens */
  clientInfo?: { name: string; version?: string };
  /** a request of a session that does something (not only the `initialized` notification) */
  uses?: boolean;
}

/** Live sessions one source address may hold on one deployment; an `initialize` beyond is refused (429). */
export const DEFAULT_SESSIONS_PER_CLIENT = 100;

/** The body of `{url}/health`, and whether it says healthy. */
export interface HealthReport {
  healthy: boolean;
  body: Record<string, unknown>;
}

/** What became of one request, for the deployment's metrics and (in development) its log. */
export type CallOutcome = Omit<RequestEvent, 'deploymentId' | 'server' | 'environment'>;

/** One try of a request on one instance. */
export interface Attempt {
  readonly instance: string;
  readonly host: string;
  readonly port: number;
  /** the Unix socket it also listens on (a process runner's instance): the hop goes over it */
  readonly socketPath?: string;
  /** the request named a session and goes to the instance that holds it */
  readonly sticky: boolean;
  /** a proxy accepts its connections (Docker's for a Swarm task): a reset before any answer is checked like a lost connection */
  readonly proxied?: boolean;
  /** the connection to the instance failed before anything was sent: it is checked at once */
  refused(): void;
  /** whether the instance answers its health check now (a broken connection: is it still there?) */
  answers(): Promise<boolean>;
  /**
   * The instance answered: `session` is its Mcp-Session-Id header. A new id is remembered for
   * this instance; a DELETE answered 2xx, or a 404 to a request with a session, ends the session.
   */
  answered(status: number, session: string | undefined): void;
  /** the try is over: the instance's request in flight is done */
  release(): void;
}

/**
 * What the gateway routes to: an instance the engine supervises (ManagedInstance), or a replica an
 * orchestrator runs (orchestrated.ts).
 */
export interface Backend {
  readonly id: string;
  readonly host: string | undefined;
  readonly port: number | undefined;
  /** the Unix socket it also listens on, if any */
  readonly socketPath?: string | undefined;
  /** the gateway may send it requests */
  readonly serving: boolean;
  /**
   * it runs but failed its last health check (and is not yet replaced): the gateway sends it
   * requests only while no instance is serving, rather than refuse them all
   */
  readonly standby?: boolean;
  /** it runs and may hold sessions */
  readonly reachable: boolean;
  /** bumped at every start: a session held by an earlier process is gone */
  readonly generation: number;
  /** requests in flight */
  outstanding: number;
  /** a connection to it failed: check it now */
  suspect(): void;
  answers(): Promise<boolean>;
  /** the gateway sends it a request (an instance whose checks were spaced out checks again) */
  requested(now: number): void;
  /** it answered a request with a status below 500: as good as a passed check */
  answered(now: number): void;
  /** its port is a proxy that accepts connections even when nothing answers behind it */
  readonly proxied?: boolean;
}

/** The gateway's view of one deployment. */
export interface Upstream {
  readonly id: string;
  readonly status: DeploymentState;
  /** development: the gateway logs every request and its answer */
  readonly traced: boolean;
  /** who may call it (its definition's `auth`); undefined when anyone may */
  readonly guard: Guard | undefined;
  healthReport(): HealthReport;
  /** deployed and holding no instance (scale to zero): a request wakes it first */
  readonly idle?: boolean;
  /** starts its instances for a request that found it idle; rejects when none came up */
  wake?(): Promise<void>;
  /** the session was held by an instance that no longer runs (forgotten now): its requests get 404 */
  sessionGone?(session: string): boolean;
  /** what its base URL says of it besides its id and state (describe.ts) */
  describe?(): { server: string; environment: string; auth: string };
  /**
   * The instance for a try of a request. With `session` (the request's Mcp-Session-Id) that the
   * deployment knows: the instance that holds it, or 'session gone' when that instance stopped or
   * restarted. Otherwise the healthy instance with the fewest requests in flight, never one of
   * `tried` (while none is healthy, one that runs but failed its last check); undefined when there
   * is none.
   */
  pick(request: PickRequest, tried: ReadonlySet<string>): Attempt | 'session gone' | 'too many sessions' | undefined;
  /** whether sending the request twice is harmless (see safeToRepeat) */
  safeToRepeat(request: McpRequestInfo): boolean;
  report(outcome: CallOutcome): void;
  log(level: 'debug' | 'info' | 'warn' | 'error', message: string, extra?: Partial<LogLine>): void;
  /** the gateway's span of a request, when the engine exports traces (src/engine/observability/tracing.ts) */
  startSpan?(req: IncomingMessage, info: McpRequestInfo, text: string, requestId: string): RequestSpan | undefined;
}

export class DeploymentUpstream implements Upstream {
  readonly sessions = new Sessions();
  private rotation = 0;
  private guarded: { guard: Guard | undefined } | undefined;

  constructor(private readonly live: LiveDeployment) {}

  /**
   * The same check its instances make, built once: the definition's `auth` with the deployment's
   * own values, and its URLs as the audiences a token may name. A value that does not resolve
   * lets nobody in (its instances cannot start either).
   */
  get guard(): Guard | undefined {
    if (this.guarded !== undefined) return this.guarded.guard;
    const live = this.live;
    const { definition } = live.ctx.server;
    const env = live.record.config.env_vars ?? {};
    let guard: Guard | undefined;
    try {
      const auth = resolveAuth(definition.auth, definition.tools ?? [], (value, path) =>
        resolveEnvRefs(value, env, path),
      );
      guard =
        auth === undefined
          ? undefined
          : createGuard(auth, {
              audiences: deploymentAudiences(live.record.deployment),
              resourceName: live.serverName,
            });
    } catch {
      guard = createGuard({ type: 'bearer', tokens: [] });
    }
    this.guarded = { guard };
    return guard;
  }

  get id(): string {
    return this.live.id;
  }
  get status(): DeploymentState {
    return this.live.status;
  }
  get traced(): boolean {
    return this.live.environment === 'development';
  }

  describe(): { server: string; environment: string; auth: string } {
    const live = this.live;
    return {
      server: live.serverName,
      environment: live.environment,
      auth: live.ctx.server.definition.auth?.type ?? 'none',
    };
  }

  get idle(): boolean {
    return this.live.idling.idle;
  }

  wake(): Promise<void> {
    return this.live.idling.wake();
  }

  sessionGone(session: string): boolean {
    return this.sessions.lookup(session, this.live.ctx.clock(), false) === 'gone';
  }

  healthReport(): HealthReport {
    const live = this.live;
    const checks = live.instances.map((instance) => instance.lastCheck ?? 0);
    const last = Math.max(0, ...checks);
    // an idle deployment is healthy without an instance: the next request starts one
    const idle = live.status === 'deployed' && live.idling.idle;
    const healthy = idle || (live.status === 'deployed' && live.healthy() > 0);
    return {
      healthy,
      body: {
        status: healthy ? 'healthy' : live.status === 'deployed' ? 'unhealthy' : live.status,
        ...(idle ? { idle: true } : {}),
        deployment_id: live.id,
        instances: {
          total: live.describeInstances().filter((i) => i.state !== 'stopped').length,
          healthy: live.healthy(),
        },
        last_check: last === 0 ? null : new Date(last).toISOString(),
      },
    };
  }

  pick(request: PickRequest, tried: ReadonlySet<string>): Attempt | 'session gone' | 'too many sessions' | undefined {
    const now = this.live.ctx.clock();
    this.live.lastActivity = now;
    if (request.session !== undefined) {
      const held = this.sessions.lookup(request.session, now, request.uses !== false);
      if (held === 'gone') return 'session gone';
      if (held !== undefined) return tried.has(held.id) ? 'session gone' : this.attempt(held, true, request, now);
    } else if (request.opens === true && request.client !== undefined && tried.size === 0) {
      const { limits } = this.live.ctx;
      const quota = limits.sessionsPerClient ?? DEFAULT_SESSIONS_PER_CLIENT;
      if (quota > 0 && this.sessions.heldByClient(request.client, now, limits.sessionIdleMs) >= quota)
        return 'too many sessions';
    }
    const instance = this.leastLoaded(tried);
    return instance === undefined ? undefined : this.attempt(instance, false, request, now);
  }

  /**
   * The healthy instance with the fewest requests in flight. While none is healthy, the ones that
   * run but failed their last health check take the requests: a check that timed out on a busy
   * machine (every instance at once, when the machine stalls) must not turn into a 503 for every
   * client while the instances still answer; an instance that really stopped answering is replaced
   * after `unhealthyThreshold` checks as before.
   */
  private leastLoaded(tried: ReadonlySet<string>): Backend | undefined {
    const backends = this.live.backends();
    let candidates = backends.filter((instance) => instance.serving && !tried.has(instance.id));
    if (candidates.length === 0)
      candidates = backends.filter((instance) => instance.standby === true && !tried.has(instance.id));
    if (candidates.length === 0) return undefined;
    // Start the scan at a rotating offset so ties are shared out round-robin.
    const offset = this.rotation++ % candidates.length;
    let best: Backend | undefined;
    for (let i = 0; i < candidates.length; i += 1) {
      const candidate = candidates[(offset + i) % candidates.length]!;
      if (best === undefined || candidate.outstanding < best.outstanding) best = candidate;
    }
    return best;
  }

  private attempt(instance: Backend, sticky: boolean, request: PickRequest, now: number): Attempt {
    const live = this.live;
    live.trackLoad(1);
    instance.outstanding += 1;
    instance.requested(now);
    let released = false;
    return {
      instance: instance.id,
      host: instance.host ?? '127.0.0.1',
      port: instance.port ?? 0,
      ...(instance.socketPath === undefined ? {} : { socketPath: instance.socketPath }),
      sticky,
      ...(instance.proxied === true ? { proxied: true } : {}),
      refused: () => {
        instance.suspect();
        if (sticky && request.session !== undefined) this.sessions.close(request.session);
      },
      answers: () => instance.answers(),
      answered: (status, session) => {
        const now = live.ctx.clock();
        // An answer shows the process serves: as good as a passed health check.
        if (status < 500) instance.answered(now);
        if (session !== undefined && session !== request.session && status < 400) {
          const idleMs = live.ctx.limits.sessionIdleMs;
          this.sessions.open(session, instance, now, idleMs, request.client, request.clientInfo);
        }
        if (request.session === undefined) return;
        const ended = (request.method === 'DELETE' && status >= 200 && status < 300) || status === 404;
        if (ended) this.sessions.close(request.session);
      },
      release: () => {
        if (released) return;
        released = true;
        live.trackLoad(-1);
        instance.outstanding = Math.max(0, instance.outstanding - 1);
      },
    };
  }

  safeToRepeat(request: McpRequestInfo): boolean {
    return safeToRepeat(request, this.live);
  }

  startSpan(req: IncomingMessage, info: McpRequestInfo, text: string, requestId: string): RequestSpan | undefined {
    return this.live.ctx.tracing?.startRequest(req, info, text, requestId, this.live);
  }

  report(outcome: CallOutcome): void {
    this.live.lastActivity = Math.max(this.live.lastActivity, outcome.at);
    // Built field by field: spreading optional parts made three objects per request to throw away.
    const sample: RequestSample = { t: outcome.at, latencyMs: outcome.latencyMs, status: outcome.status };
    if (outcome.method !== undefined) sample.method = outcome.method;
    if (outcome.tool !== undefined) sample.tool = outcome.tool;
    if (outcome.toolError !== undefined) sample.toolError = outcome.toolError;
    this.live.samples.push(sample);
    const observers = this.live.ctx.observers;
    if (observers === undefined || observers.size === 0) return;
    // a request of a session counts for the client that opened it
    if (outcome.session !== undefined) {
      const client = this.sessions.clientInfo(outcome.session);
      if (client !== undefined) outcome.client = client;
    }
    observers.request(this.requestEvent(outcome));
  }

  private requestEvent(outcome: CallOutcome): RequestEvent {
    const { live } = this;
    return { deploymentId: live.id, server: live.serverName, environment: live.environment, ...outcome };
  }

  log(level: 'debug' | 'info' | 'warn' | 'error', message: string, extra: Partial<LogLine> = {}): void {
    this.live.log(level, message, extra);
  }
}

/**
 * Whether sending a request twice is harmless: any method but tools/call (initialize, lists,
 * reads, pings, notifications), or a call of a tool its definition marks read-only or idempotent.
 */
export function safeToRepeat(info: McpRequestInfo, live: Pick<LiveDeployment, 'ctx'>): boolean {
  if (info.method === undefined || info.method === 'batch') return false;
  if (info.method !== 'tools/call') return true;
  const tool = live.ctx.server.definition.tools?.find((t) => t.name === info.tool);
  return tool?.annotations?.readOnlyHint === true || tool?.annotations?.idempotentHint === true;
}
