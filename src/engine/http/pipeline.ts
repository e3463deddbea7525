/**
 * The steps every request to the engine goes through, in order. Each either answers the request
 * ('answered': the pipeline ends), lets it go on ('next'), or throws the error it is answered with.
 */
import { z } from 'zod';
import { firstHeader } from '../../shared/http.js';
import type { EngineLimits } from '../engine-limits.js';
import type { DeploymentService } from '../services.js';
import { ServiceError } from '../service-error.js';
import { authenticateLimited } from './api-key-check.js';
import { hasBody, isJsonMediaType, parseJsonBody, readBody } from './body.js';
import { apiOriginProblem } from './cors.js';
import type { Exchange } from './exchange.js';
import type { FailureLimiter } from './failure-limit.js';
import { hostNameOf, type HostPolicy } from './hosts.js';
import type { Idempotency } from './idempotency.js';
import type { RateLimiter } from './rate-limit.js';
import { HttpError, type EnvelopeBody } from './respond.js';
import type { Router } from './router.js';
import type { Route, RouteContext } from './routes.js';
import { validateBody } from './zod-details.js';
import { answerUiFile, isUiPath, setUiHeaders } from './ui-assets.js';
import {
  answerSessionEndpoint,
  authenticateSession,
  removeSessionCookie,
  type SessionEndpointParts,
} from './ui-session.js';
import { METRICS_PATH, type MetricsEndpoint } from '../observability/prometheus-endpoint.js';

/** What the steps act with: the app's parts, made once. */
export interface PipelineParts {
  deployments: DeploymentService | undefined;
  publicUrl: string | undefined;
  hosts: HostPolicy;
  keyDigest: Buffer;
  failures: FailureLimiter;
  limiter: RateLimiter;
  router: Router<Route>;
  idempotency: Idempotency;
  limits: EngineLimits;
  isDraining: () => boolean;
  /** GET /metrics; absent: the path is the data plane's */
  metrics?: Pick<MetricsEndpoint, 'serve'> | undefined;
  /** the dashboard: its sessions, and the folder of its files */
  ui: SessionEndpointParts & { dir: string };
}

export type Outcome = 'answered' | 'next';
export type Step = (x: Exchange, parts: PipelineParts) => Outcome | Promise<Outcome>;

const checkPath: Step = (x) => {
  if (x.path === undefined) throw new HttpError('bad_request', 'the request target is not a valid path');
  return 'next';
};

/** DNS-rebinding protection: only the engine's own names, and the deployments' custom domains. */
const checkHost: Step = (x, { hosts, deployments }) => {
  const host = firstHeader(x.req.headers.host);
  if (hosts.allows(host) || deployments?.servesDomain?.(hostNameOf(host ?? '')) === true) return 'next';
  throw new HttpError(
    'forbidden',
    `this engine does not answer to the host name ${JSON.stringify(host)}; use its address, or add the name to MCPCTL_ALLOWED_HOSTS where the engine runs`,
  );
};

/** GET /metrics on the engine's own names (a deployment's custom domain keeps the path): the API key or the metrics token. */
const metrics: Step = async (x, { metrics: endpoint, hosts, failures }): Promise<Outcome> => {
  if (x.path !== METRICS_PATH || endpoint === undefined || !hosts.allows(firstHeader(x.req.headers.host)))
    return 'next';
  await endpoint.serve(x.req, x.res, failures);
  return 'answered';
};

/** The dashboard under /ui on the engine's own names (a deployment's custom domain keeps the path). */
const dashboard: Step = async (x, { hosts, ui }): Promise<Outcome> => {
  if (!isUiPath(x.path) || !hosts.allows(firstHeader(x.req.headers.host))) return 'next';
  setUiHeaders(x);
  if (!(await answerSessionEndpoint(x, ui))) await answerUiFile(x, ui.dir);
  return 'answered';
};

/** Anything not under /v1 is the data plane: the deployments' gateway answers it, or nothing does. */
const dataPlane: Step = async (x, { deployments }): Promise<Outcome> => {
  if (x.api) return 'next';
  removeSessionCookie(x.req);
  if (deployments !== undefined && (await deployments.handleGateway(x.req, x.res, x.requestId))) return 'answered';
  throw new ServiceError('not_found', `nothing is served at ${x.path}; the API is under /v1`);
};

/** A page of another origin is refused even with the right key (cors.ts). */
const checkOrigin: Step = (x, { publicUrl }) => {
  const foreignPage = apiOriginProblem(x.req, publicUrl);
  if (foreignPage !== undefined) throw new HttpError('forbidden', foreignPage);
  return 'next';
};

const watchClient: Step = (x) => {
  const aborts = (x.controller = new AbortController());
  x.res.once('close', () => {
    if (!x.res.writableFinished) aborts.abort(new Error('the client went away'));
  });
  return 'next';
};

const refuseWhileDraining: Step = (_x, { isDraining }) => {
  if (isDraining())
    throw new HttpError('unavailable', 'the engine is stopping; retry in a moment', { 'Retry-After': '1' });
  return 'next';
};

/** The API key, or the dashboard's session cookie with its CSRF token (ui-session.ts). */
const authenticate: Step = (x, { keyDigest, failures, ui }) => {
  x.key = authenticateSession(x.req, x.path, ui.sessions) ?? authenticateLimited(x.req, keyDigest, failures);
  return 'next';
};

const rateLimit: Step = (x, { limiter }) => {
  const decision = limiter.take(x.key);
  if (decision.allowed) return 'next';
  throw new HttpError('rate_limited', `too many requests; retry in ${decision.retryAfter} s`, {
    'Retry-After': String(decision.retryAfter),
  });
};

const findRoute: Step = (x, { router }) => {
  const { method, path } = x;
  const found = router.lookup(method, path!);
  if (found.kind === 'not_found') throw new ServiceError('not_found', `no such endpoint: ${method} ${path}`);
  if (found.kind === 'method_not_allowed') {
    throw new HttpError('method_not_allowed', `${method} is not allowed on ${path}; use ${found.allow.join(' or ')}`, {
      Allow: found.allow.join(', '),
    });
  }
  x.route = found.match.route;
  x.params = found.match.params;
  return 'next';
};

/** A POST's body is read whole (JSON, within the size limit); any other request's is let go. */
const receiveBody: Step = async (x, { limits }): Promise<Outcome> => {
  if (x.method !== 'POST') {
    x.req.resume();
    return 'next';
  }
  if (hasBody(x.req) && !isJsonMediaType(x.req.headers['content-type'])) {
    throw new HttpError(
      'unsupported_media_type',
      'a request body must be JSON, sent with Content-Type: application/json',
    );
  }
  x.raw = await readBody(x.req, limits.bodyBytes);
  return 'next';
};

/** A repeated `Idempotency-Key` gets the first answer again; a new one claims the key for this request. */
const idempotency: Step = async (x, { idempotency: store }): Promise<Outcome> => {
  const idempotencyKey = firstHeader(x.req.headers['idempotency-key']);
  if (x.raw === undefined || x.route?.idempotent !== true || idempotencyKey === undefined) return 'next';
  const { method, path } = x;
  const outcome = await store.begin(idempotencyKey, `${x.key}\n${method} ${path}`, x.raw, {
    signal: x.controller!.signal,
    onWait: () =>
      x.log().info('waiting for the earlier request with this Idempotency-Key, to replay its answer', { method, path }),
  });
  if ('replay' in outcome) {
    const stored = outcome.replay.body as Omit<EnvelopeBody, 'meta'>;
    x.send(outcome.replay.status, stored, { 'Idempotent-Replayed': 'true' });
    return 'answered';
  }
  x.claim = outcome.claim;
  return 'next';
};

const NO_BODY = z.strictObject({});

/** The body against the route's schema and its further checks; a route without one takes none. */
const validate: Step = (x) => {
  const route = x.route!;
  const raw = x.raw;
  if (raw === undefined || (route.body === undefined && raw.length === 0)) return 'next';
  if (route.body === undefined) {
    validateBody(NO_BODY, parseJsonBody(raw));
    return 'next';
  }
  const value = validateBody(route.body, parseJsonBody(raw));
  const problems = route.check?.(value as never) ?? [];
  if (problems.length > 0)
    throw new HttpError('validation_failed', 'the request is over a limit of this service', {}, problems);
  x.body = value;
  return 'next';
};

/** The operation, and its answer in the envelope (stored first for a claimed `Idempotency-Key`). */
const operate: Step = async (x): Promise<Outcome> => {
  const context: RouteContext = {
    req: x.req,
    res: x.res,
    requestId: x.requestId,
    params: x.params,
    query: queryOf(x.req.url),
    body: x.body,
    signal: x.controller!.signal,
    log: x.log(),
  };
  const reply = await x.route!.handle(context);
  if (reply === 'streamed') return 'answered';
  const envelope = { success: reply.status < 400, data: reply.data };
  await x.claim?.finish({ status: reply.status, body: envelope });
  x.claim = undefined;
  x.send(reply.status, envelope, reply.headers);
  return 'answered';
};

/** In this order: each step may rely on what the ones before it found out. */
export const STEPS: readonly Step[] = [
  checkPath,
  checkHost,
  metrics,
  dashboard,
  dataPlane,
  checkOrigin,
  watchClient,
  refuseWhileDraining,
  authenticate,
  rateLimit,
  findRoute,
  receiveBody,
  idempotency,
  validate,
  operate,
];

/** Runs the steps until one answers. */
export async function runSteps(x: Exchange, parts: PipelineParts): Promise<void> {
  for (const step of STEPS) {
    if ((await step(x, parts)) === 'answered') return;
  }
}

function queryOf(url: string | undefined): URLSearchParams {
  const raw = url ?? '';
  const start = raw.indexOf('?');
  if (start === -1) return new URLSearchParams();
  const end = raw.indexOf('#', start);
  return new URLSearchParams(raw.slice(start + 1, end === -1 ? undefined : end));
}
