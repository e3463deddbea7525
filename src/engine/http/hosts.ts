/**
 * DNS-rebinding protection. A web page can make a browser send requests to 127.0.0.1 under a
 * name its own DNS points there (`evil.example` → 127.0.0.1); the browser then sends that name
 * as `Host`. An engine that answers only the names it is known by is out of such a page's
 * reach: the loopback names, the addresses it is bound to (for a wildcard bind, the addresses of
 * the machine's interfaces), its public URL's host, the names in `MCPCTL_ALLOWED_HOSTS` and the
 * domains of its deployments. Pure.
 */
import { SETTINGS, settingValue } from '../../shared/settings.js';

export interface HostPolicy {
  /** true when a request with this `Host` header may be answered */
  allows(hostHeader: string | undefined): boolean;
}

export interface HostPolicyOptions {
  /** the address the engine is bound to */
  bindHost: string;
  /** more addresses it is bound to (the HTTPS listener's, when it has its own) */
  moreBindHosts?: readonly string[] | undefined;
  /** the IP addresses of the machine's interfaces: the names a wildcard bind is reached by */
  machineAddresses?: readonly string[] | undefined;
  /** the address clients use, when it is not the bound one */
  publicUrl?: string | undefined;
  /** more names (`MCPCTL_ALLOWED_HOSTS`); `*` accepts any */
  extra?: readonly string[] | undefined;
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/** `Example.COM:7070` → `example.com`; `[::1]:80` → `[::1]`; a bare IPv6 address gets brackets. */
export function hostNameOf(value: string): string {
  const host = value.trim().toLowerCase();
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    return end === -1 ? host : host.slice(0, end + 1);
  }
  const colons = host.split(':').length - 1;
  if (colons > 1) return `[${host}]`;
  return colons === 1 ? host.slice(0, host.indexOf(':')) : host;
}

function isWildcard(host: string): boolean {
  return host === '' || host === '0.0.0.0' || host === '::' || host === '[::]';
}

function isLoopbackName(name: string): boolean {
  return LOOPBACK_NAMES.includes(name) || name.endsWith('.localhost') || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

/** An address as it appears in a Host header: an IPv6 one in brackets. */
function addressName(address: string): string {
  return hostNameOf(address.includes(':') && !address.startsWith('[') ? `[${address}]` : address);
}

/** Whether an address the engine binds (`127.0.0.1`, `::1`, `localhost`) is reached from this machine only. */
export function isLoopbackAddress(bindHost: string): boolean {
  const bare = bindHost.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

export function createHostPolicy(options: HostPolicyOptions): HostPolicy {
  const extra = (options.extra ?? []).map((name) => name.trim()).filter((name) => name !== '');
  if (extra.includes('*')) return { allows: () => true };
  const names = new Set<string>(extra.map(hostNameOf));
  const bound = [options.bindHost, ...(options.moreBindHosts ?? [])];
  for (const host of bound) {
    // a wildcard is reached by the machine's own addresses; a name the engine does not know needs MCPCTL_ALLOWED_HOSTS
    if (isWildcard(host)) for (const address of options.machineAddresses ?? []) names.add(addressName(address));
    else names.add(addressName(host));
  }
  if (options.publicUrl !== undefined) {
    try {
      names.add(new URL(options.publicUrl).hostname.toLowerCase());
    } catch {
      // not a URL: the engine says so elsewhere
    }
  }
  // The same Host comes with request after request: the last one let in is not looked at again.
  let lastAllowed: string | undefined;
  return {
    allows(header) {
      // HTTP/1.0 without Host: no browser sends such a request
      if (header === undefined || header === '' || header === lastAllowed) return true;
      const name = hostNameOf(header);
      const allowed = isLoopbackName(name) || names.has(name);
      if (allowed) lastAllowed = header;
      return allowed;
    },
  };
}

/** `MCPCTL_ALLOWED_HOSTS=api.example.com,10.0.0.5` as a list. */
export function allowedHostsFromEnv(env: Record<string, string | undefined>): string[] {
  return settingValue(SETTINGS.allowedHosts, { env }) ?? [];
}
