/**
 * The data plane: `/d/<name>/mcp` and `/d/<name>/health` on the engine's port, and `/mcp` and
 * `/health` for a request whose Host is a deployment's domain; `/d/<name>` itself describes the
 * deployment (describe.ts). It finds the deployment (its Upstream) and answers health itself; MCP
 * requests are passed on by proxy.ts. A deployment whose
 * definition has `auth` is checked here as its instances check it (src/runtime/server/auth.ts): a request
 * without a valid credential is refused before any instance sees it, and the gateway serves the
 * protected resource metadata of each of its URLs (`/.well-known/oauth-protected-resource/d/<name>/mcp`,
 * and `/.well-known/oauth-protected-resource[/mcp]` on a domain). An address that sends too many
 * wrong credentials is refused (429) for a while (src/engine/http/failure-limit.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { endpointOfMetadataPath, requestOrigin, type Guard } from '../../runtime/server/auth.js';
import { firstHeader, sendJson } from '../../shared/http.js';
import { deploymentCrossOrigin } from '../http/cors.js';
import { FailureLimiter } from '../http/failure-limit.js';
import { GATEWAY_PREFIX } from './prefix.js';
import { BodyBudget } from './body-budget.js';
import { createInstanceConnections, type InstanceConnections } from './instance-connections.js';
import type { DeploymentLimits } from '../deployments/limits.js';
import { proxyMcp, type ProxyOptions } from './proxy.js';
import { sendRpcError } from './rpc-errors.js';
import { answerDescription } from './describe.js';
import type { Upstream } from './upstream.js';

export interface GatewayRoutes {
  byName(name: string): Upstream | undefined;
  byDomain(host: string): Upstream | undefined;
  /** a deployment that exists but does not run (stopped, failed), for a clear answer */
  inactive(name: string): Promise<{ deployment_id: string; status: string } | undefined>;
}

export interface GatewayOptions {
  limits: DeploymentLimits;
  /** the origins whose pages may call deployments (MCPCTL_ALLOWED_ORIGINS); the engine's own always may */
  allowedOrigins?: readonly string[];
  /** the engine's own address (its public URL): its pages are same-origin */
  publicUrl?: string;
  clock: () => number;
  newRequestId: () => string;
}

/**
 * Answers a request of the data plane; false when it is not one (the engine's own routes answer it).
 * `requestId` is the id the engine's HTTP layer gave the request; without one, the client's
 * X-Request-Id or a new one. Every answer carries it.
 */
export type Gateway = ((req: IncomingMessage, res: ServerResponse, requestId?: string) => Promise<boolean>) & {
  close(): void;
};

export function createGateway(routes: GatewayRoutes, options: GatewayOptions): Gateway {
  const gateway: GatewayState = {
    routes,
    options,
    connections: createInstanceConnections(),
    // Wrong bearer tokens per source address, across deployments: a guesser is blocked for a while.
    failures: new FailureLimiter({}, options.clock),
    budget: new BodyBudget(options.limits.bodyBudgetBytes),
  };
  const handle = (req: IncomingMessage, res: ServerResponse, given?: string) => route(gateway, req, res, given);
  // Open connections are cut: the instances are being stopped, and nothing waits for their answers.
  return Object.assign(handle, { close: () => void gateway.connections.destroy().catch(() => {}) });
}

/** What every request of one gateway shares. */
interface GatewayState {
  routes: GatewayRoutes;
  options: GatewayOptions;
  connections: InstanceConnections;
  failures: FailureLimiter;
  budget: BodyBudget;
}

/** A request of the data plane, with the deployment it names. */
interface GatewayRequest {
  req: IncomingMessage;
  res: ServerResponse;
  pathname: string;
  search: string;
  /** undefined: no running deployment of that name */
  upstream: Upstream | undefined;
  name: string;
  /** the endpoint: `/mcp`, `/health`, or anything else asked for */
  rest: string;
  requestId: string;
}

/** The steps of a request, in order; false when the request is not the data plane's. */
async function route(gateway: GatewayState, req: IncomingMessage, res: ServerResponse, given?: string) {
  const { pathname, search } = splitTarget(req.url ?? '/');
  const metadataOf = endpointOfMetadataPath(pathname);
  if (metadataOf !== undefined) return serveMetadata(gateway, req, res, metadataOf, given);
  const target = findTarget(gateway, req, pathname);
  // Not one of ours: the engine's own routes answer it.
  if (target === undefined) return false;
  const requestId = given ?? firstHeader(req.headers['x-request-id']) ?? gateway.options.newRequestId();
  const request: GatewayRequest = { req, res, pathname, search, ...target, requestId };
  if (answerCrossOrigin(gateway, request)) return true;
  if (request.rest === '/') {
    res.setHeader('X-Request-Id', requestId);
    await describeDeployment(gateway, request);
    return true;
  }
  const serving = isServing(request);
  // A passed-on answer gets the id with the instance's headers, in one go; the gateway's own here.
  if (serving && request.rest === '/mcp') await passOn(gateway, request, serving);
  else {
    res.setHeader('X-Request-Id', requestId);
    if (request.rest !== '/mcp' && request.rest !== '/health') answerNoEndpoint(request);
    else if (!serving) await answerNotServing(gateway, request);
    else answerHealth(request, serving);
  }
  return true;
}

/** The deployment whose domain the request's Host names. */
function byHost(gateway: GatewayState, req: IncomingMessage): Upstream | undefined {
  const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
  return host === '' ? undefined : gateway.routes.byDomain(host);
}

/** `/d/<name>/…`, or `/mcp` and `/health` on a deployment's domain; undefined for any other request. */
function findTarget(
  gateway: GatewayState,
  req: IncomingMessage,
  pathname: string,
): Pick<GatewayRequest, 'upstream' | 'name' | 'rest'> | undefined {
  if (pathname.startsWith(`${GATEWAY_PREFIX}/`)) {
    const { name, rest } = namedPath(pathname);
    return { upstream: gateway.routes.byName(name), name, rest };
  }
  if (pathname !== '/mcp' && pathname !== '/health') return undefined;
  const upstream = byHost(gateway, req);
  return upstream === undefined ? undefined : { upstream, name: upstream.id, rest: pathname };
}

/**
 * Pages of other origins call only when allowed; the instance never sees the Origin (cors.ts
 * decides). True when that answered the request: a refusal, or a preflight, which carries no
 * credential and needs no instance.
 */
function answerCrossOrigin({ options }: GatewayState, { req, res, requestId }: GatewayRequest): boolean {
  const cross = deploymentCrossOrigin(req, options.allowedOrigins ?? [], options.publicUrl);
  if (cross.kind === 'refused') {
    sendRpcError(res, 403, cross.message, { 'X-Request-Id': requestId });
    return true;
  }
  if (cross.kind !== 'allowed') return false;
  for (const [header, value] of Object.entries(cross.headers)) res.setHeader(header, value);
  if (req.method !== 'OPTIONS') return false;
  res.writeHead(204, { 'X-Request-Id': requestId }).end();
  return true;
}

/** The upstream when it serves the request: running, or draining and asked for a session it holds. */
function isServing({ upstream, rest, req }: GatewayRequest): Upstream | undefined {
  if (upstream === undefined) return undefined;
  const draining = rest === '/mcp' && req.headers['mcp-session-id'] !== undefined;
  return (upstream.status !== 'stopped' && upstream.status !== 'failed') || draining ? upstream : undefined;
}

type Admission = NonNullable<ProxyOptions['auth']>;

/**
 * The credential check of a deployment with `auth`: its admission, undefined when it checks none,
 * or 'answered' when the request was refused.
 */
async function admit(
  { failures }: GatewayState,
  { req, res, pathname, requestId }: GatewayRequest,
  guard: Guard | undefined,
): Promise<Admission | undefined | 'answered'> {
  if (guard === undefined) return undefined;
  const resource = `${requestOrigin(req)}${pathname}`;
  const address = req.socket.remoteAddress;
  // Shared secrets can be guessed; signed tokens cannot, and a refused one is usually just expired.
  const counted = guard.kind === 'bearer';
  const waiting = counted ? failures.blockedFor(address) : 0;
  if (waiting > 0) {
    sendRpcError(res, 429, `too many requests with a wrong credential from this address; retry in ${waiting} s`, {
      'Retry-After': String(waiting),
      'X-Request-Id': requestId,
    });
    return 'answered';
  }
  const decision = await guard.check({ authorization: req.headers.authorization, resource });
  if (decision.ok) return { guard, admitted: decision, resource };
  if (counted && decision.status === 401 && req.headers.authorization !== undefined) failures.fail(address);
  sendRpcError(res, decision.status, decision.message, {
    ...decision.headers,
    ...readableByPages(req),
    'X-Request-Id': requestId,
  });
  return 'answered';
}

/** An MCP request of a serving deployment, admitted, passed on to an instance (proxy.ts). */
async function passOn(gateway: GatewayState, request: GatewayRequest, upstream: Upstream): Promise<void> {
  const auth = await admit(gateway, request, upstream.guard);
  if (auth === 'answered') return;
  const { req, res, search, requestId } = request;
  const { connections, budget, options } = gateway;
  await proxyMcp(upstream, req, res, { search, connections, requestId, auth, budget, ...options });
}

/** `/d/<name>` itself: what the deployment is and where an MCP client connects (describe.ts). */
async function describeDeployment({ routes }: GatewayState, { req, res, upstream, name }: GatewayRequest) {
  const known =
    upstream === undefined
      ? await routes.inactive(name)
      : { deployment_id: upstream.id, status: upstream.status, ...upstream.describe?.() };
  answerDescription(req, res, name, known);
}

function answerNoEndpoint({ res, name }: GatewayRequest): void {
  sendJson(res, 404, {
    error: `no such endpoint; use ${GATEWAY_PREFIX}/${name}/mcp or ${GATEWAY_PREFIX}/${name}/health`,
  });
}

/** A deployment that does not run, or none of that name: its health or a JSON-RPC error. */
async function answerNotServing({ routes }: GatewayState, { res, upstream, name, rest }: GatewayRequest) {
  const known =
    upstream === undefined ? await routes.inactive(name) : { deployment_id: upstream.id, status: upstream.status };
  if (known === undefined) {
    const body = { error: `no deployment named ${name}` };
    if (rest === '/health') sendJson(res, 404, body);
    else sendRpcError(res, 404, body.error);
  } else if (rest === '/health') {
    sendJson(res, 503, {
      status: known.status,
      deployment_id: known.deployment_id,
      instances: { total: 0, healthy: 0 },
      last_check: null,
    });
  } else {
    sendRpcError(res, 503, `deployment ${known.deployment_id} is ${known.status}`);
  }
}

function answerHealth({ req, res }: GatewayRequest, upstream: Upstream): void {
  const report = upstream.healthReport();
  sendJson(res, report.healthy ? 200 : 503, report.body, { headOnly: req.method === 'HEAD' });
}

/** The RFC 9728 document of a deployment's MCP URL `endpoint` (`/d/<name>/mcp`, or `/mcp` and `` on a domain). */
function serveMetadata(
  gateway: GatewayState,
  req: IncomingMessage,
  res: ServerResponse,
  endpoint: string,
  given: string | undefined,
): boolean {
  let upstream: Upstream | undefined;
  let path = endpoint;
  if (endpoint.startsWith(`${GATEWAY_PREFIX}/`)) {
    const { name, rest } = namedPath(endpoint);
    if (rest === '/mcp') upstream = gateway.routes.byName(name);
  } else if (endpoint === '' || endpoint === '/mcp') {
    upstream = byHost(gateway, req);
    // Not one of ours: the engine's own routes answer it.
    if (upstream === undefined) return false;
    path = '/mcp';
  } else return false;
  res.setHeader('X-Request-Id', given ?? firstHeader(req.headers['x-request-id']) ?? gateway.options.newRequestId());
  const document = upstream?.guard?.metadata(`${requestOrigin(req)}${path}`);
  if (document === undefined) {
    sendJson(res, 404, {
      error:
        upstream === undefined
          ? 'no such deployment'
          : 'this server does not use OAuth: it has no protected resource metadata',
    });
  } else sendJson(res, 200, document, { headOnly: req.method === 'HEAD', headers: readableByPages(req) });
  return true;
}

/** `/d/<name>/rest…` → the name and the rest (`/mcp`, `/health`, …). */
function namedPath(pathname: string): { name: string; rest: string } {
  const [name = '', ...rest] = pathname.slice(GATEWAY_PREFIX.length + 1).split('/');
  return { name, rest: `/${rest.join('/')}` };
}

/**
 * A refusal of a credential and the protected resource metadata hold nothing secret, and a
 * browser-based client (the MCP Inspector) must read both to find the authorization server.
 */
function readableByPages(req: IncomingMessage): Record<string, string> {
  if (req.headers.origin === undefined) return {};
  return { 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': 'WWW-Authenticate' };
}

/**
 * The path and query of a request target, as `new URL(target, base)` gives them for the targets
 * the gateway routes (origin-form, `/d/<name>/mcp?x=1`), without building a URL per request:
 * dot segments resolved, percent-encoding left as sent. Anything unusual goes through URL.
 */
export function splitTarget(target: string): { pathname: string; search: string } {
  const hash = target.indexOf('#');
  const bare = hash === -1 ? target : target.slice(0, hash);
  const query = bare.indexOf('?');
  const pathname = query === -1 ? bare : bare.slice(0, query);
  if (
    pathname.startsWith('/') &&
    !pathname.startsWith('//') &&
    !/[^A-Za-z0-9._~!$&'()*+,;=:@%/-]|\/\.|%2e/i.test(pathname)
  ) {
    const search = query === -1 || query === bare.length - 1 ? '' : bare.slice(query);
    if (!/[^\x21-\x7e]|["'<>]/.test(search)) return { pathname, search };
  }
  const url = new URL(target, 'http://gateway');
  return { pathname: url.pathname, search: url.search };
}
