/**
 * How the engine's listeners face the network: HTTPS may have an address of its own (public while
 * plain HTTP stays on loopback), every HTTPS answer tells browsers to keep to HTTPS (HSTS), and the
 * Host check knows the names a wildcard bind is reached by (the machine's own addresses).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { networkInterfaces } from 'node:os';
import { allowedHostsFromEnv, createHostPolicy, isLoopbackAddress, type HostPolicy } from './hosts.js';

/** One year: a browser that once reached the engine over HTTPS does not try plain HTTP for it again. */
export const HSTS_VALUE = 'max-age=31536000';

/** The handler of the HTTPS listener: every answer (API and gateway) carries Strict-Transport-Security. */
export function withHsts<T>(
  handler: (req: IncomingMessage, res: ServerResponse) => T,
): (req: IncomingMessage, res: ServerResponse) => T {
  return (req, res) => {
    res.setHeader('Strict-Transport-Security', HSTS_VALUE);
    return handler(req, res);
  };
}

/** The IP addresses of this machine's interfaces (loopback included), as a wildcard bind is reached by them. */
export function machineAddresses(): string[] {
  const addresses: string[] = [];
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) addresses.push(entry.address);
  }
  return addresses;
}

/** The host part of a URL for a bound address: a wildcard becomes loopback, IPv6 gets brackets. */
export function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** Whether either listener is reached from beyond this machine. */
export function listensBeyondLoopback(host: string, tlsHost: string | undefined): boolean {
  return !isLoopbackAddress(host) || (tlsHost !== undefined && !isLoopbackAddress(tlsHost));
}

/** The Host names the engine answers: its addresses (both listeners'), its public URL, MCPCTL_ALLOWED_HOSTS. */
export function engineHostPolicy(options: {
  host: string;
  tlsHost: string | undefined;
  publicUrl: string | undefined;
  env: Record<string, string | undefined>;
}): HostPolicy {
  return createHostPolicy({
    bindHost: options.host,
    moreBindHosts: options.tlsHost === undefined ? [] : [options.tlsHost],
    machineAddresses: machineAddresses(),
    publicUrl: options.publicUrl,
    extra: allowedHostsFromEnv(options.env),
  });
}
