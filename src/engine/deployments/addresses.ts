/**
 * Where a deployment is reached besides its own URL, and what it says about HTTPS. The stable
 * URLs of a server in an environment always reach its current deployed deployment (the gateway
 * finds it with registry.stable() or by the domain): a rollout or a rollback moves them, so they
 * are the ones to give to MCP clients. Each is an MCP endpoint, most useful first: the custom
 * domain, `<server>.<env>.localhost` over HTTPS then HTTP (when the engine is on loopback:
 * `*.localhost` resolves to loopback on its machine only), and the path form `/d/<server>.<env>/mcp`
 * on the engine's own address, which works wherever the engine is reached.
 */
import type { IsolationReport } from '../isolation.js';
import type { Deployment, Environment } from '../../api/contract.js';
import type { HttpsEndpoint } from '../services.js';
import { deploymentUrl } from './registry.js';

export interface EngineAddresses {
  /** the engine's address, such as http://127.0.0.1:7070 */
  baseUrl: string;
  /** its HTTPS listener, when it has certificates */
  https?: HttpsEndpoint | undefined;
  /** what the process runner's instances run under (a sandbox, limits) */
  isolation?: IsolationReport | undefined;
  /** the engine sends alerts to a channel */
  alerting?: boolean | undefined;
}

/** The stable MCP endpoints of `server` in `environment`. */
export function stableUrls(
  engine: EngineAddresses,
  server: string,
  environment: Environment,
  domain: string | undefined,
): string[] {
  const name = `${server.toLowerCase()}.${environment}`;
  const base = new URL(engine.baseUrl);
  const urls: string[] = [];
  if (domain !== undefined) {
    urls.push(
      engine.https?.covers(domain) === true
        ? `https://${domain}${portPart(engine.https.port, 443)}/mcp`
        : `${base.protocol}//${domain}${portOf(base)}/mcp`,
    );
  }
  if (isLoopback(base.hostname)) {
    const host = `${name}.localhost`;
    if (engine.https?.covers(host) === true) urls.push(`https://${host}${portPart(engine.https.port, 443)}/mcp`);
    urls.push(`${base.protocol}//${host}${portOf(base)}/mcp`);
  }
  urls.push(`${deploymentUrl(engine.baseUrl, name)}/mcp`);
  return urls;
}

/**
 * The MCP URLs that name a deployment, for the `aud` of an OAuth access token: its own URL and
 * its stable ones, each also with the other loopback names of the engine's address (a client may
 * reach 127.0.0.1 as localhost). Its instances are given the same list, so a token the gateway
 * lets through, the instance lets through too.
 */
export function deploymentAudiences(d: Pick<Deployment, 'url' | 'stable_urls'>): string[] {
  const urls = [`${d.url}/mcp`, ...(d.stable_urls ?? [])];
  const all = new Set<string>();
  for (const url of urls) {
    all.add(url);
    const parsed = new URL(url);
    const bare = parsed.hostname.replace(/^\[|\]$/g, '');
    if (bare !== 'localhost' && bare !== '::1' && !/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare)) continue;
    for (const alias of ['127.0.0.1', 'localhost', '[::1]']) {
      parsed.hostname = alias;
      all.add(parsed.href);
    }
  }
  return [...all];
}

/**
 * Which HTTPS applies to a deployment, said plainly. One case per way HTTPS is provided; a runner
 * whose platform issues certificates (cert-manager on Kubernetes) adds its own case here.
 */
export function httpsNotices(engine: EngineAddresses, environment: Environment, domain: string | undefined): string[] {
  const https = engine.https;
  const hint =
    'give the engine a certificate and key (`mcpctl serve --tls-cert FILE --tls-key FILE`, or "tls" in engine-settings.json: docs/engine.md#https)';
  if (domain !== undefined) {
    if (https?.covers(domain) === true) {
      return [
        `HTTPS: served by this engine’s gateway with the certificate for ${domain} (port ${https.port}); DNS for ${domain} is yours to set up`,
      ];
    }
    return [`no certificate for ${domain}: it is served over plain HTTP only; ${hint}. DNS for it is yours to set up`];
  }
  if (environment !== 'production') return [];
  if (https !== undefined)
    return [
      `HTTPS: served by this engine’s gateway on port ${https.port}, with the certificate that covers the name a client asks for`,
    ];
  return [`no HTTPS: the URLs are plain HTTP on this host; ${hint}, or put a TLS proxy in front of it`];
}

function isLoopback(hostname: string): boolean {
  const bare = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return (
    bare === 'localhost' ||
    bare === '::1' ||
    bare.endsWith('.localhost') ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare)
  );
}

function portOf(url: URL): string {
  return url.port === '' ? '' : `:${url.port}`;
}

function portPart(port: number, standard: number): string {
  return port === standard ? '' : `:${port}`;
}
