/**
 * The data plane: `/d/<name>/mcp` and `/d/<name>/health` on the engine's port, and `/mcp` and
 * `/health` for a request whose Host is a deployment's domain. It finds the deployment (its
 * Upstream) and answers health itself; MCP requests are passed on by proxy.ts. A deployment whose
 * definition has `auth` is checked here as its instances check it (src/runtime/server/auth.ts): a request
 * without a valid credential is refused before any instance sees it, and the gateway serves the
 * protected resource metadata of each of its URLs (`/.well-known/oauth-protected-resource/d/<name>/mcp`,
 * and `/.well-known/oauth-protected-resource[/mcp]` on a domain). An address that sends too many
 * wrong credentials is refused (429) for a while (src/engine/http/failure-limit.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { endpointOfMetadataPath, requestOrigin, type Admitted } from '../../runtime/server/auth.js';
import { firstHeader, sendJson } from '../../shared/http.js';
import { deploymentCrossOrigin } from '../http/cors.js';
import { FailureLimiter } from '../http/failure-limit.js';
import { GATEWAY_PREFIX } from './prefix.js';
import { BodyBudget } from './body-budget.js';
import { createInstanceConnections } from './instance-connections.js';
import type { DeploymentLimits } from '../deployments/limits.js';
import { proxyMcp, sendRpcError } from './proxy.js';
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
  const connections = createInstanceConnections();
  // Wrong bearer tokens per source address, across deployments: a guesser is blocked for a while.
  const failures = new FailureLimiter({}, options.clock);
  const budget = new BodyBudget(options.limits.bodyBudgetBytes);

  /** The deployment whose domain the request's Host names. */
  const byHost = (req: IncomingMessage): Upstream | undefined => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
    return host === '' ? undefined : routes.byDomain(host);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, given?: string): Promise<boolean> => {
    const { pathname, search } = splitTarget(req.url ?? '/');
    const metadataOf = endpointOfMetadataPath(pathname);
    if (metadataOf !== undefined) return serveMetadata(req, res, metadataOf, given);
    let target: { upstream: Upstream | undefined; name: string; rest: string };
    if (pathname.startsWith(`${GATEWAY_PREFIX}/`)) {
      const { name, rest } = namedPath(pathname);
      target = { upstream: routes.byName(name), name, rest };
    } else {
      if (pathname !== '/mcp' && pathname !== '/health') return false;
      const upstream = byHost(req);
      // Not one of ours: the engine's own routes answer it.
      if (upstream === undefined) return false;
      target = { upstream, name: upstream.id, rest: pathname };
    }
    const { upstream, name, rest } = target;
    const requestId = given ?? firstHeader(req.headers['x-request-id']) ?? options.newRequestId();
    // Pages of other origins call only when allowed; the instance never sees the Origin (cors.ts decides).
    const cross = deploymentCrossOrigin(req, options.allowedOrigins ?? [], options.publicUrl);
    if (cross.kind === 'refused') {
      sendRpcError(res, 403, cross.message, { 'X-Request-Id': requestId });
      return true;
    }
    if (cross.kind === 'allowed') {
      for (const [header, value] of Object.entries(cross.headers)) res.setHeader(header, value);
      // a preflight is answered here: it carries no credential and needs no instance
      if (req.method === 'OPTIONS') {
        res.writeHead(204, { 'X-Request-Id': requestId }).end();
        return true;
      }
    }
    // A draining deployment still serves the sessions its instances hold.
    const draining = upstream !== undefined && rest === '/mcp' && req.headers['mcp-session-id'] !== undefined;
    const serving =
      upstream !== undefined && ((upstream.status !== 'stopped' && upstream.status !== 'failed') || draining);
    // A passed-on answer gets the id with the instance's headers, in one go; the gateway's own here.
    if (serving && rest === '/mcp') {
      const guard = upstream.guard;
      let auth: { guard: NonNullable<typeof guard>; admitted: Admitted; resource: string } | undefined;
      if (guard !== undefined) {
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
          return true;
        }
        const decision = await guard.check({ authorization: req.headers.authorization, resource });
        if (!decision.ok) {
          if (counted && decision.status === 401 && req.headers.authorization !== undefined) failures.fail(address);
          sendRpcError(res, decision.status, decision.message, {
            ...decision.headers,
            ...readableByPages(req),
            'X-Request-Id': requestId,
          });
          return true;
        }
        auth = { guard, admitted: decision, resource };
      }
      await proxyMcp(upstream, req, res, { search, connections, requestId, auth, budget, ...options });
      return true;
    }
    res.setHeader('X-Request-Id', requestId);
    if (rest !== '/mcp' && rest !== '/health') {
      sendJson(res, 404, {
        error: `no such endpoint; use ${GATEWAY_PREFIX}/${name}/mcp or ${GATEWAY_PREFIX}/${name}/health`,
      });
      return true;
    }
    if (!serving) {
      const known =
        upstream === undefined ? await routes.inactive(name) : { deployment_id: upstream.id, status: upstream.status };
      if (known === undefined) {
        const body = { error: `no deployment named ${name}` };
        if (rest === '/health') sendJson(res, 404, body);
        else sendRpcError(res, 404, body.error);
        return true;
      }
      if (rest === '/health') {
        sendJson(res, 503, {
          status: known.status,
          deployment_id: known.deployment_id,
          instances: { total: 0, healthy: 0 },
          last_check: null,
        });
      } else {
        sendRpcError(res, 503, `deployment ${known.deployment_id} is ${known.status}`);
      }
      return true;
    }
    const report = upstream.healthReport();
    sendJson(res, report.healthy ? 200 : 503, report.body, { headOnly: req.method === 'HEAD' });
    return true;
  };
  /** The RFC 9728 document of a deployment's MCP URL `endpoint` (`/d/<name>/mcp`, or `/mcp` and `` on a domain). */
  const serveMetadata = (
    req: IncomingMessage,
    res: ServerResponse,
    endpoint: string,
    given: string | undefined,
  ): boolean => {
    let upstream: Upstream | undefined;
    let path = endpoint;
    if (endpoint.startsWith(`${GATEWAY_PREFIX}/`)) {
      const { name, rest } = namedPath(endpoint);
      if (rest === '/mcp') upstream = routes.byName(name);
    } else if (endpoint === '' || endpoint === '/mcp') {
      upstream = byHost(req);
      // Not one of ours: the engine's own routes answer it.
      if (upstream === undefined) return false;
      path = '/mcp';
    } else return false;
    res.setHeader('X-Request-Id', given ?? firstHeader(req.headers['x-request-id']) ?? options.newRequestId());
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
  };
  // Open connections are cut: the instances are being stopped, and nothing waits for their answers.
  return Object.assign(handle, { close: () => void connections.destroy().catch(() => {}) });
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
