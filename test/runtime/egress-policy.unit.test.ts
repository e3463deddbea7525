import { describe, expect, it } from 'vitest';
import { EgressPolicy } from '../../src/runtime/server/egress.js';

describe('egress policy', () => {
  const deployed = new EgressPolicy(undefined);
  const open = new EgressPolicy({ allow_private: true });
  const dev = new EgressPolicy(undefined, { allowPrivate: true });
  const listed = new EgressPolicy({ allow: ['api.internal', 'db.internal:8443', '10.0.0.5:8080', '[fd00::7]'] });

  it.each<[string, EgressPolicy, string, number, string, 'allowed' | 'opt-in' | 'never']>([
    ['public, deployed', deployed, 'api.example.com', 443, '93.184.216.34', 'allowed'],
    ['loopback literal, deployed', deployed, '127.0.0.1', 80, '127.0.0.1', 'opt-in'],
    ['a name resolving to loopback, deployed', deployed, 'localhost', 80, '127.0.0.1', 'opt-in'],
    ['mapped loopback, deployed', deployed, '::ffff:7f00:1', 80, '::ffff:7f00:1', 'opt-in'],
    ['private, deployed', deployed, 'db', 5432, '10.1.2.3', 'opt-in'],
    ['loopback with allow_private', open, 'localhost', 80, '127.0.0.1', 'allowed'],
    ['private with allow_private', open, 'db', 80, '192.168.0.9', 'allowed'],
    ['link-local with allow_private', open, 'x', 80, '169.254.1.1', 'never'],
    ['metadata with allow_private', open, '169.254.169.254', 80, '169.254.169.254', 'never'],
    ['IPv6 metadata with allow_private', open, 'x', 80, 'fd00:ec2::254', 'never'],
    ['Alibaba metadata with allow_private', open, 'x', 80, '100.100.100.200', 'never'],
    ['loopback under mcpctl dev', dev, 'localhost', 3000, '::1', 'allowed'],
    ['metadata under mcpctl dev', dev, 'x', 80, '169.254.169.254', 'never'],
    ['unspecified under mcpctl dev', dev, '0.0.0.0', 80, '0.0.0.0', 'never'],
    ['a listed name, any port', listed, 'API.internal.', 9000, '10.9.9.9', 'allowed'],
    ['a listed name and port', listed, 'db.internal', 8443, '10.9.9.9', 'allowed'],
    ['a listed name, another port', listed, 'db.internal', 5432, '10.9.9.9', 'opt-in'],
    ['a listed address and port', listed, '10.0.0.5', 8080, '10.0.0.5', 'allowed'],
    ['a listed address, another port', listed, '10.0.0.5', 8081, '10.0.0.5', 'opt-in'],
    ['a listed IPv6 address', listed, 'fd00:0:0::7', 443, 'fd00::7', 'allowed'],
    ['another name', listed, 'other.internal', 80, '10.9.9.9', 'opt-in'],
    ['a listed name resolving to metadata', listed, 'api.internal', 80, '169.254.169.254', 'never'],
  ])('%s', (_label, policy, host, port, address, expected) => {
    const refused = policy.judge(host, port, address);
    const verdict = refused === undefined ? 'allowed' : refused.includes('no setting allows it') ? 'never' : 'opt-in';
    expect(verdict).toBe(expected);
    if (verdict === 'opt-in') expect(refused).toContain('allow_private: true');
  });

  it('names the setting and the host to list when it refuses a private address', () => {
    expect(deployed.judge('localhost', 8080, '127.0.0.1')).toBe(
      'localhost resolves to 127.0.0.1, a loopback address, which a deployed server reaches only when its definition allows it: ' +
        'add egress: { allow: ["localhost:8080"] } (or egress: { allow_private: true }) at the top of the definition',
    );
    expect(open.judge('169.254.169.254', 80, '169.254.169.254')).toBe(
      '169.254.169.254 is a cloud metadata address, which no server may reach (no setting allows it)',
    );
    expect(open.judgeName('metadata.google.internal')).toContain('no setting allows it');
  });
});
