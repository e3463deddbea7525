/**
 * What kind of address an IP is, for the egress policy: public, private, loopback, or one of the
 * kinds a server never reaches (link-local, cloud metadata, unspecified, multicast, broadcast,
 * reserved). IPv6 forms that carry an IPv4 address (mapped, translated, NAT64, 6to4) are judged by
 * that IPv4 address, so `::ffff:127.0.0.1` is loopback. Pure: no IO.
 */
import ipaddr from 'ipaddr.js';

export type AddressKind =
  | 'public'
  | 'private'
  | 'loopback'
  | 'link-local'
  | 'metadata'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'reserved';

/** Cloud instance metadata services: AWS, GCP, Azure, Oracle (169.254.169.254), AWS IPv6, Alibaba. */
const METADATA_ADDRESSES = new Set(['169.254.169.254', 'fd00:ec2:0:0:0:0:0:254', '100.100.100.200']);

/** Names of metadata services, refused whatever they resolve to (a trailing dot is the same name). */
const METADATA_NAMES = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
]);

export function isMetadataName(hostname: string): boolean {
  return METADATA_NAMES.has(hostname.toLowerCase().replace(/\.+$/, ''));
}

/** The kind of an IP address; undefined when the text is not one. */
export function classifyAddress(text: string): AddressKind | undefined {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  // four-part dotted decimal only: `127.1` or `0x7f.0.0.1` are names to a resolver, and URLs normalise them anyway
  if (!ipaddr.IPv4.isValidFourPartDecimal(bare) && !ipaddr.IPv6.isValid(bare)) return undefined;
  let address: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    address = ipaddr.parse(bare);
  } catch {
    return undefined;
  }
  return address.kind() === 'ipv4' ? classifyIPv4(address as ipaddr.IPv4) : classifyIPv6(address as ipaddr.IPv6);
}

function classifyIPv4(address: ipaddr.IPv4): AddressKind {
  if (METADATA_ADDRESSES.has(address.toString())) return 'metadata';
  switch (address.range()) {
    case 'unspecified':
      return 'unspecified';
    case 'broadcast':
      return 'broadcast';
    case 'multicast':
      return 'multicast';
    case 'linkLocal':
      return 'link-local';
    case 'loopback':
      return 'loopback';
    case 'private':
    case 'carrierGradeNat':
      return 'private';
    case 'reserved':
    case 'benchmarking':
      return 'reserved';
    default:
      return 'public';
  }
}

function classifyIPv6(address: ipaddr.IPv6): AddressKind {
  if (METADATA_ADDRESSES.has(address.toNormalizedString())) return 'metadata';
  const parts = address.parts;
  const range = address.range() as string;
  switch (range) {
    case 'unspecified':
      return 'unspecified';
    case 'loopback':
      return 'loopback';
    case 'linkLocal':
      return 'link-local';
    case 'multicast':
      return 'multicast';
    case 'uniqueLocal':
    case 'deprecatedSiteLocal':
      return 'private';
    case 'ipv4Mapped':
    case 'rfc6145':
    case 'rfc6052':
      return classifyIPv4(embeddedIPv4(parts[6]!, parts[7]!));
    case '6to4':
      return classifyIPv4(embeddedIPv4(parts[1]!, parts[2]!));
    case 'unicast':
    case 'amt':
    case 'as112v6':
      // ::/96 (the old IPv4-compatible form) carries an IPv4 address too; nothing public lives there
      return parts.slice(0, 6).every((part) => part === 0) ? 'reserved' : 'public';
    default:
      // teredo, discard, benchmarking, documentation, ORCHID, segment routing: nothing to call
      return 'reserved';
  }
}

function embeddedIPv4(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/** Kinds that need `egress.allow_private` (or the host in `egress.allow`) in a deployment. */
export function needsOptIn(kind: AddressKind): boolean {
  return kind === 'private' || kind === 'loopback';
}

/** Kinds never reached, whatever the definition says. */
export function isForbidden(kind: AddressKind): boolean {
  return kind !== 'public' && !needsOptIn(kind);
}
