import { describe, expect, it } from 'vitest';
import {
  classifyAddress,
  isForbidden,
  isMetadataName,
  needsOptIn,
  type AddressKind,
} from '../../src/shared/ip-address.js';

const TABLE: Array<[string, AddressKind | undefined]> = [
  // public
  ['93.184.216.34', 'public'],
  ['8.8.8.8', 'public'],
  ['2606:4700:4700::1111', 'public'],
  ['[2606:4700:4700::1111]', 'public'],
  // private (RFC 1918, CGNAT, unique local, old site-local)
  ['10.0.0.1', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['100.64.0.1', 'private'],
  ['100.127.255.254', 'private'],
  ['fc00::1', 'private'],
  ['fd12:3456::1', 'private'],
  ['fec0::1', 'private'],
  // just outside the private ranges
  ['172.15.255.255', 'public'],
  ['172.32.0.1', 'public'],
  ['100.63.255.255', 'public'],
  ['100.128.0.1', 'public'],
  // loopback, also as IPv4 inside IPv6
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['::1', 'loopback'],
  ['[::1]', 'loopback'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['[::ffff:7f00:1]', 'loopback'],
  ['::ffff:0:127.0.0.1', 'loopback'],
  ['64:ff9b::127.0.0.1', 'loopback'],
  ['2002:7f00:1::', 'loopback'],
  ['::ffff:10.1.2.3', 'private'],
  ['::ffff:8.8.8.8', 'public'],
  // link-local and metadata: never
  ['169.254.0.1', 'link-local'],
  ['169.254.170.2', 'link-local'],
  ['fe80::1', 'link-local'],
  ['febf::1', 'link-local'],
  ['169.254.169.254', 'metadata'],
  ['::ffff:169.254.169.254', 'metadata'],
  ['::ffff:a9fe:a9fe', 'metadata'],
  ['fd00:ec2::254', 'metadata'],
  ['100.100.100.200', 'metadata'],
  ['::ffff:100.100.100.200', 'metadata'],
  // unspecified, multicast, broadcast, reserved
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['::', 'unspecified'],
  ['::ffff:0.0.0.0', 'unspecified'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['ff02::1', 'multicast'],
  ['255.255.255.255', 'broadcast'],
  ['240.0.0.1', 'reserved'],
  ['192.0.2.1', 'reserved'],
  ['198.18.0.1', 'reserved'],
  ['2001:db8::1', 'reserved'],
  ['2001::1', 'reserved'],
  ['::7f00:1', 'reserved'],
  // the dotted form is read as mapped (URLs write it as ::7f00:1, above): loopback, which needs the opt-in too
  ['::127.0.0.1', 'loopback'],
  // not addresses: names go through the resolver, and the connector judges what it returns
  ['localhost', undefined],
  ['example.com', undefined],
  ['127.1', undefined],
  ['0x7f000001', undefined],
  ['2130706433', undefined],
  ['', undefined],
];

describe('address classification', () => {
  it.each(TABLE)('%s is %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  it('sorts kinds into allowed, opt-in and never', () => {
    expect(needsOptIn('private')).toBe(true);
    expect(needsOptIn('loopback')).toBe(true);
    expect(isForbidden('public')).toBe(false);
    for (const kind of ['link-local', 'metadata', 'unspecified', 'multicast', 'broadcast', 'reserved'] as const) {
      expect([kind, isForbidden(kind), needsOptIn(kind)]).toEqual([kind, true, false]);
    }
  });

  it.each([
    ['metadata.google.internal', true],
    ['METADATA.Google.Internal.', true],
    ['metadata.goog', true],
    ['metadata', true],
    ['metadata.example.com', false],
    ['api.example.com', false],
  ])('the name %s is a metadata service: %s', (name, expected) => {
    expect(isMetadataName(name)).toBe(expected);
  });
});
