/** What a deployment's notices say it does and does not do, per runner: on Kubernetes, HTTPS is cert-manager's. */
import { describe, expect, it } from 'vitest';
import { noticesFor } from '../../../src/engine/deployments/new-record.js';

describe('deployment notices', () => {
  it('on the engine’s own runners: one host, no automatic HTTPS, a domain whose certificate is yours', () => {
    const notices = noticesFor('production', 'mcp.example.com', 'docker').join('\n');
    expect(notices).toContain('single machine');
    expect(notices).toContain('no automatic HTTPS');
    expect(notices).toContain('DNS and certificates for it are yours');
    expect(noticesFor('production', undefined)).toEqual(noticesFor('production', undefined, 'process'));
  });

  it('on Kubernetes: cert-manager issues the domain’s certificate, the pods spread over regions', () => {
    const withDomain = noticesFor('production', 'mcp.example.com', 'kubernetes').join('\n');
    expect(withDomain).toMatch(/HTTPS: an Ingress routes mcp\.example\.com to the pods, and cert-manager issues its certificate/);
    expect(withDomain).toContain('https://mcp.example.com/mcp');
    expect(withDomain).toContain('topology.kubernetes.io/region');
    expect(withDomain).not.toMatch(/single machine|no automatic HTTPS|yours to set up/);
    expect(noticesFor('production', undefined, 'kubernetes').join('\n')).toMatch(/no HTTPS: without a domain there is no Ingress/);
    expect(noticesFor('staging', 'stg.example.com', 'kubernetes').join('\n')).toContain('cert-manager issues its certificate');
    expect(noticesFor('development', undefined, 'kubernetes')).toEqual([]);
  });
});
