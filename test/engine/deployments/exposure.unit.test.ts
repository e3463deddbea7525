import { describe, expect, it } from 'vitest';
import { authView, checkExposure, exposureReasons, publicNotice } from '../../../src/engine/deployments/exposure.js';
import { ServiceError } from '../../../src/engine/service-error.js';
import type { ServerRecord } from '../../../src/engine/records.js';

function server(auth?: ServerRecord['definition']['auth']): ServerRecord {
  return {
    server: { mcp_id: 'mcp_abc', name: 'notes' },
    definition: { name: 'notes', template: 'basic', ...(auth === undefined ? {} : { auth }) },
  } as unknown as ServerRecord;
}

describe('exposure', () => {
  it.each([
    ['a loopback engine, no domain, processes', { domain: undefined, engineExposed: false, runner: 'process' }, []],
    ['a loopback engine with Docker containers', { domain: undefined, engineExposed: false, runner: 'docker' }, []],
    [
      'a domain',
      { domain: 'notes.example.com', engineExposed: false, runner: 'process' },
      ['the domain notes.example.com'],
    ],
    [
      'a domain on Kubernetes',
      { domain: 'notes.example.com', engineExposed: false, runner: 'kubernetes' },
      ['an Ingress serves notes.example.com'],
    ],
    [
      'an engine on every address',
      { domain: undefined, engineExposed: true, runner: 'process' },
      ['this engine listens on an address other machines reach'],
    ],
    [
      'a Swarm service',
      { domain: undefined, engineExposed: false, runner: 'swarm' },
      ['a Swarm service publishes its port'],
    ],
  ])('with %s', (_, input, expected) => {
    const reasons = exposureReasons(input);
    expect(reasons).toHaveLength(expected.length);
    expected.forEach((start, i) => expect(reasons[i]).toContain(start));
  });

  it('refuses an exposed deployment without auth at the path auth, and lets any auth through', () => {
    const exposed = { domain: 'notes.example.com', engineExposed: false, runner: 'process' };
    let refused: unknown;
    try {
      checkExposure(server(), exposed);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ServiceError);
    expect((refused as ServiceError).code).toBe('validation_failed');
    expect((refused as ServiceError).details?.[0]?.path).toBe('auth');
    expect((refused as ServiceError).message).toContain('has no auth');
    for (const auth of [
      { type: 'none' as const },
      { type: 'bearer' as const, token: '${T}' },
      { type: 'oauth' as const, issuer: 'https://a.example', scopes: [] },
    ]) {
      expect(() => checkExposure(server(auth), exposed)).not.toThrow();
    }
    expect(() => checkExposure(server(), { domain: undefined, engineExposed: false, runner: 'process' })).not.toThrow();
  });

  it('says what a deployment’s auth is, and that auth: none is public on purpose', () => {
    const stable = ['http://notes.example.com:7070/mcp', 'http://127.0.0.1:7070/d/notes.production/mcp'];
    expect(authView(server(), stable)).toBeUndefined();
    expect(authView(server({ type: 'bearer', token: '${T}' }), stable)).toEqual({ type: 'bearer' });
    expect(authView(server({ type: 'oauth', issuer: 'https://a.example', scopes: [] }), stable)).toEqual({
      type: 'oauth',
      resource_metadata: 'http://notes.example.com:7070/.well-known/oauth-protected-resource/mcp',
    });
    expect(publicNotice(server({ type: 'none' }))[0]).toMatch(/^public: anyone who reaches it can call it/);
    expect(publicNotice(server({ type: 'oauth', issuer: 'https://a.example', scopes: [] }))).toEqual([]);
  });
});
