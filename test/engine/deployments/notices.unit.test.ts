/** What a deployment's notices say it does and does not do, per runner: on Kubernetes, HTTPS is cert-manager's. */
import { describe, expect, it } from 'vitest';
import { noticesFor } from '../../../src/engine/deployments/new-record.js';

describe('deployment notices', () => {
  it('on the engine’s own runners: one host, and HTTPS only with a certificate given to the engine', () => {
    const engine = { baseUrl: 'http://127.0.0.1:7070' };
    const notices = noticesFor('production', 'mcp.example.com', engine, 'docker').join('\n');
    expect(notices).toContain('single machine');
    expect(notices).toContain('no certificate for mcp.example.com: it is served over plain HTTP only');
    expect(notices).toContain('DNS for it is yours to set up');
    expect(noticesFor('production', undefined, engine)).toEqual(noticesFor('production', undefined, engine, 'process'));
    expect(noticesFor('production', undefined, engine, 'swarm').join('\n')).toContain(
      'Swarm service: its tasks are spread',
    );
  });

  it('on Kubernetes: cert-manager issues the domain’s certificate, the pods spread over regions', () => {
    const withDomain = noticesFor('production', 'mcp.example.com', undefined, 'kubernetes').join('\n');
    expect(withDomain).toMatch(
      /HTTPS: an Ingress routes mcp\.example\.com to the pods, and cert-manager issues its certificate/,
    );
    expect(withDomain).toContain('https://mcp.example.com/mcp');
    expect(withDomain).toContain('topology.kubernetes.io/region');
    expect(withDomain).not.toMatch(/single machine|no automatic HTTPS|yours to set up/);
    expect(noticesFor('production', undefined, undefined, 'kubernetes').join('\n')).toMatch(
      /no HTTPS: without a domain there is no Ingress/,
    );
    expect(noticesFor('staging', 'stg.example.com', undefined, 'kubernetes').join('\n')).toContain(
      'cert-manager issues its certificate',
    );
    expect(noticesFor('development', undefined, undefined, 'kubernetes')).toEqual([]);
  });
});
