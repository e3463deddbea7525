import { describe, expect, it } from 'vitest';
import {
  deploymentAudiences,
  httpsNotices,
  stableUrls,
  type EngineAddresses,
} from '../../../src/engine/deployments/addresses.js';

const plain: EngineAddresses = { baseUrl: 'http://127.0.0.1:7070' };
/** an engine whose certificates cover mcp.example.com and *.production.localhost */
const secure: EngineAddresses = {
  baseUrl: 'http://127.0.0.1:7070',
  https: {
    url: 'https://127.0.0.1:7443',
    port: 7443,
    covers: (host) => host === 'mcp.example.com' || /^[^.]+\.production\.localhost$/.test(host),
  },
};

describe('stable URLs', () => {
  it.each([
    [
      'plain, no domain',
      plain,
      'production',
      undefined,
      ['http://weather.production.localhost:7070/mcp', 'http://127.0.0.1:7070/d/weather.production/mcp'],
    ],
    [
      'plain, a domain',
      plain,
      'staging',
      'mcp.example.com',
      [
        'http://mcp.example.com:7070/mcp',
        'http://weather.staging.localhost:7070/mcp',
        'http://127.0.0.1:7070/d/weather.staging/mcp',
      ],
    ],
    [
      'HTTPS for the domain and the localhost name',
      secure,
      'production',
      'mcp.example.com',
      [
        'https://mcp.example.com:7443/mcp',
        'https://weather.production.localhost:7443/mcp',
        'http://weather.production.localhost:7070/mcp',
        'http://127.0.0.1:7070/d/weather.production/mcp',
      ],
    ],
    [
      'HTTPS, a name no certificate covers',
      secure,
      'development',
      'other.example.org',
      [
        'http://other.example.org:7070/mcp',
        'http://weather.development.localhost:7070/mcp',
        'http://127.0.0.1:7070/d/weather.development/mcp',
      ],
    ],
    [
      'a public address: no *.localhost form',
      { baseUrl: 'https://engine.example.com' },
      'production',
      undefined,
      ['https://engine.example.com/d/weather.production/mcp'],
    ],
    [
      'standard port 443 is left out',
      { baseUrl: 'http://localhost:7070', https: { url: 'https://localhost', port: 443, covers: () => true } },
      'production',
      'mcp.example.com',
      [
        'https://mcp.example.com/mcp',
        'https://weather.production.localhost/mcp',
        'http://weather.production.localhost:7070/mcp',
        'http://localhost:7070/d/weather.production/mcp',
      ],
    ],
  ] as const)('%s', (_name, engine, environment, domain, expected) => {
    expect(stableUrls(engine, 'Weather', environment, domain)).toEqual(expected);
  });
});

describe('HTTPS notices', () => {
  it('say which HTTPS applies', () => {
    expect(httpsNotices(secure, 'development', 'mcp.example.com')).toEqual([
      'HTTPS: served by this engine’s gateway with the certificate for mcp.example.com (port 7443); DNS for mcp.example.com is yours to set up',
    ]);
    expect(httpsNotices(secure, 'production', 'other.example.org')[0]).toMatch(
      /^no certificate for other\.example\.org: it is served over plain HTTP only; give the engine/,
    );
    expect(httpsNotices(secure, 'production', undefined)[0]).toMatch(
      /^HTTPS: served by this engine’s gateway on port 7443/,
    );
    expect(httpsNotices(plain, 'production', undefined)[0]).toMatch(
      /^no HTTPS: the URLs are plain HTTP on this host; give the engine a certificate and key \(`mcpctl serve --tls-cert/,
    );
    // development and staging without a domain: nothing to say
    expect(httpsNotices(plain, 'staging', undefined)).toEqual([]);
  });
});

describe('deploymentAudiences', () => {
  it('names the deployment’s own and stable MCP URLs, each loopback one under every loopback name, and nothing of another server', () => {
    const audiences = deploymentAudiences({
      url: 'http://127.0.0.1:7070/d/deploy_abc',
      stable_urls: ['http://notes.example.com:7070/mcp', 'http://127.0.0.1:7070/d/notes.production/mcp'],
    });
    expect(audiences).toEqual(
      expect.arrayContaining([
        'http://127.0.0.1:7070/d/deploy_abc/mcp',
        'http://localhost:7070/d/deploy_abc/mcp',
        'http://[::1]:7070/d/deploy_abc/mcp',
        'http://notes.example.com:7070/mcp',
        'http://localhost:7070/d/notes.production/mcp',
      ]),
    );
    expect(audiences).not.toContain('http://localhost:7070/mcp');
    expect(audiences.some((a) => a.includes('other'))).toBe(false);
  });
});
