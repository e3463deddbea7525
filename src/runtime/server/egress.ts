/**
 * The egress policy of `http` handlers and `url` resources, and the undici dispatcher that applies
 * it. The address is judged where the connection is made: the connector resolves the name itself,
 * judges each address, and connects to an allowed one by its IP, so a name that resolves to one
 * address when checked and another when connected (DNS rebinding) gains nothing. Link-local and
 * metadata addresses are never reached; private and loopback ones only with the definition's
 * `egress` (or under `mcpctl dev`, on the developer's own machine).
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { buildConnector, Dispatcher } from 'undici';
import type { EgressConfig } from '../../definition/schema.js';
import { classifyAddress, isForbidden, isMetadataName, needsOptIn, type AddressKind } from '../../shared/ip-address.js';

/** Resolves a host name to its addresses (dns.lookup by default; tests give their own). */
export type EgressLookup = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

/** One decision of the connector, for the server log and for tests. */
export interface EgressReport {
  host: string;
  port: number;
  /** the address judged; absent when the name itself is refused */
  address?: string;
  kind?: AddressKind | 'metadata name';
  /** why it was refused; absent for a connection made */
  refused?: string;
}

export interface EgressOptions {
  /** private and loopback addresses need no opt-in (`mcpctl dev`) */
  allowPrivate?: boolean;
  lookup?: EgressLookup;
  /** each connection made or refused */
  report?: (report: EgressReport) => void;
  /** time to connect, in ms (default 10 s) */
  connectTimeoutMs?: number;
}

/** A target the policy refuses: the message says what was refused and which setting allows it. */
export class EgressRefusedError extends Error {
  override readonly name = 'EgressRefusedError';
}

export interface Egress {
  /** Refuses a URL before anything is sent: a literal address or a metadata name. Throws EgressRefusedError. */
  checkUrl(url: URL): void;
  /** the dispatcher every outbound call goes through (undici is loaded on the first call, not at start-up) */
  dispatcher(): Promise<Dispatcher>;
  close(): Promise<void>;
}

const KIND_TEXT: Record<AddressKind | 'metadata name', string> = {
  public: 'a public address',
  private: 'a private address',
  loopback: 'a loopback address',
  'link-local': 'a link-local address',
  metadata: 'a cloud metadata address',
  'metadata name': 'the name of a cloud metadata service',
  unspecified: 'an unspecified address',
  multicast: 'a multicast address',
  broadcast: 'a broadcast address',
  reserved: 'a reserved address',
};

/** The policy, without IO: what a definition's `egress` (and the place it runs) allows. */
export class EgressPolicy {
  private readonly allowPrivate: boolean;
  private readonly allowed: Array<{ host: string; port: number | undefined }>;

  constructor(config: EgressConfig | undefined, options: { allowPrivate?: boolean } = {}) {
    this.allowPrivate = options.allowPrivate === true || config?.allow_private === true;
    this.allowed = (config?.allow ?? []).map(parseAllowEntry);
  }

  /** Why connecting to `address` for `host:port` is refused, or undefined when it is allowed. */
  judge(host: string, port: number, address: string): string | undefined {
    const kind = classifyAddress(address);
    if (kind === undefined) return `${address} is not an IP address`;
    const what =
      isIP(host) !== 0 ? `${address} is ${KIND_TEXT[kind]}` : `${host} resolves to ${address}, ${KIND_TEXT[kind]}`;
    if (isForbidden(kind)) return `${what}, which no server may reach (no setting allows it)`;
    if (!needsOptIn(kind) || this.allowPrivate || this.isListed(host, port)) return undefined;
    return (
      `${what}, which a deployed server reaches only when its definition allows it: ` +
      `add egress: { allow: ["${hostPort(host, port)}"] } (or egress: { allow_private: true }) at the top of the definition`
    );
  }

  /** Why the name itself is refused (a metadata service), or undefined. */
  judgeName(host: string): string | undefined {
    return isMetadataName(host)
      ? `${host} is ${KIND_TEXT['metadata name']}, which no server may reach (no setting allows it)`
      : undefined;
  }

  kindOf(address: string): AddressKind | undefined {
    return classifyAddress(address);
  }

  private isListed(host: string, port: number): boolean {
    const name = normalizeHost(host);
    return this.allowed.some((entry) => entry.host === name && (entry.port === undefined || entry.port === port));
  }
}

export function createEgress(config: EgressConfig | undefined, options: EgressOptions = {}): Egress {
  const policy = new EgressPolicy(config, options);
  const lookup = options.lookup ?? defaultLookup;
  const report = options.report ?? (() => {});
  const refuse = (entry: EgressReport & { refused: string }): EgressRefusedError => {
    report(entry);
    return new EgressRefusedError(entry.refused);
  };

  const connector =
    (base: buildConnector.connector): buildConnector.connector =>
    (connectOptions, callback) => {
      const host = connectOptions.hostname;
      const port = Number(connectOptions.port) || (connectOptions.protocol === 'https:' ? 443 : 80);
      pickAddress(policy, host, port, lookup, refuse).then(
        (address) => {
          report({ host, port, address, kind: policy.kindOf(address)! });
          // connect to the address judged, never to the name again; TLS still checks the certificate against the name
          base(
            {
              ...connectOptions,
              hostname: address,
              ...(connectOptions.protocol === 'https:' && isIP(host) === 0 ? { servername: host } : {}),
            },
            callback,
          );
        },
        (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), null),
      );
    };
  let agent: Promise<Dispatcher> | undefined;

  return {
    dispatcher: () =>
      (agent ??= import('undici').then(({ Agent, buildConnector }) => {
        return new Agent({ connect: connector(buildConnector({ timeout: options.connectTimeoutMs ?? 10_000 })) });
      })),
    checkUrl(url) {
      const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
      const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
      const named = policy.judgeName(host);
      if (named !== undefined) throw refuse({ host, port, kind: 'metadata name', refused: named });
      if (classifyAddress(host) === undefined) return;
      const refused = policy.judge(host, port, host);
      if (refused !== undefined) throw refuse({ host, port, address: host, kind: policy.kindOf(host)!, refused });
    },
    close: async () => {
      if (agent !== undefined) await (await agent).close();
    },
  };
}

/** The first address of `host` the policy allows; refuses with the reason of the first one otherwise. */
async function pickAddress(
  policy: EgressPolicy,
  host: string,
  port: number,
  lookup: EgressLookup,
  refuse: (entry: EgressReport & { refused: string }) => EgressRefusedError,
): Promise<string> {
  const named = policy.judgeName(host);
  if (named !== undefined) throw refuse({ host, port, kind: 'metadata name', refused: named });
  const addresses = classifyAddress(host) === undefined ? (await lookup(host)).map((entry) => entry.address) : [host];
  let first: (EgressReport & { refused: string }) | undefined;
  for (const address of addresses) {
    const refused = policy.judge(host, port, address);
    if (refused === undefined) return address;
    first ??= { host, port, address, kind: policy.kindOf(address) ?? 'reserved', refused };
  }
  if (first === undefined) throw new Error(`${host} has no address`);
  throw refuse(first);
}

const defaultLookup: EgressLookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** Lower case, no brackets, no trailing dot; IPv6 in its full form, so spellings compare equal. */
function normalizeHost(host: string): string {
  let name = host.toLowerCase().replace(/\.+$/, '');
  if (name.startsWith('[') && name.endsWith(']')) name = name.slice(1, -1);
  return isIP(name) === 6 ? ipaddr.IPv6.parse(name).toNormalizedString() : name;
}

function parseAllowEntry(entry: string): { host: string; port: number | undefined } {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(entry);
  if (match === null) return { host: normalizeHost(entry), port: undefined };
  return { host: normalizeHost(match[1]!), port: match[2] === undefined ? undefined : Number(match[2]) };
}

function hostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}
