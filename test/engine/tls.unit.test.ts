import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { certificateFor, type CertificateSet, type LoadedCertificate } from '../../src/engine/http/certificates.js';
import { tlsSettings } from '../../src/engine/http/tls-settings.js';

describe('certificate choice (SNI)', () => {
  const cert = (name: string) => ({ names: [name] }) as unknown as LoadedCertificate;
  const fallback = cert('default');
  const set: CertificateSet = {
    default: fallback,
    byName: new Map([
      ['mcp.example.com', cert('exact')],
      ['*.example.com', cert('wildcard')],
    ]),
    files: [],
    warnings: [],
  };
  it.each([
    ['mcp.example.com', 'exact'],
    ['MCP.Example.com.', 'exact'],
    ['api.example.com', 'wildcard'],
    ['a.api.example.com', 'default'],
    ['example.com', 'default'],
    [undefined, 'default'],
  ])('%s gets the %s certificate', (name, which) => {
    expect(certificateFor(set, name)?.names[0]).toBe(which);
  });
});

describe('TLS settings', () => {
  it('take the flag, then the variable, then engine-settings.json (paths from the home)', async () => {
    const home = await mkdtemp(join(tmpdir(), 'mcpctl-tls-'));
    try {
      const settingsFile = join(home, 'engine-settings.json');
      await writeFile(
        settingsFile,
        JSON.stringify({
          tls: {
            cert: 'c.pem',
            key: 'k.pem',
            port: 7443,
            domains: { 'MCP.example.com': { cert: '/m.pem', key: '/m.key' } },
          },
        }),
      );
      const fromFile = await tlsSettings({ env: {}, settingsFile, home });
      expect(fromFile).toEqual({
        default: {
          cert: join(home, 'c.pem'),
          key: join(home, 'k.pem'),
          from: `"tls.cert" in ${settingsFile} and "tls.key" in ${settingsFile}`,
        },
        domains: {
          'mcp.example.com': {
            cert: '/m.pem',
            key: '/m.key',
            from: `"tls.domains["MCP.example.com"]" in ${settingsFile}`,
          },
        },
        certsDir: join(home, 'certs'),
        certsDirOptional: true,
        port: 7443,
        watchIntervalMs: 2000,
      });
      const fromEnv = await tlsSettings({
        env: { MCPCTL_TLS_CERT: '/e.pem', MCPCTL_TLS_PORT: '8443', MCPCTL_TLS_CERTS_DIR: '/certs' },
        settingsFile,
        home,
      });
      expect(fromEnv).toMatchObject({
        default: { cert: '/e.pem', key: join(home, 'k.pem') },
        port: 8443,
        certsDir: '/certs',
        certsDirOptional: false,
      });
      const fromFlags = await tlsSettings({
        options: { cert: '/f.pem', key: '/f.key', port: 0 },
        env: { MCPCTL_TLS_PORT: '8443' },
        settingsFile,
        home,
      });
      expect(fromFlags).toMatchObject({
        default: { cert: '/f.pem', key: '/f.key', from: '--tls-cert and --tls-key' },
        port: 0,
      });
      await expect(tlsSettings({ env: { MCPCTL_TLS_PORT: 'many' }, settingsFile, home })).rejects.toThrow(
        'MCPCTL_TLS_PORT must be a port number from 0 to 65535, not "many"',
      );
      await writeFile(settingsFile, JSON.stringify({ tls: { key: 'k.pem' } }));
      await expect(tlsSettings({ env: {}, settingsFile, home })).rejects.toThrow(
        /"tls\.key" in .* is set but --tls-cert \(MCPCTL_TLS_CERT\) is not/,
      );
      await writeFile(settingsFile, JSON.stringify({ tls: 'yes' }));
      await expect(tlsSettings({ env: {}, settingsFile, home })).rejects.toThrow(/"tls" in .* must be an object/);
      // nothing anywhere: no default, the home's certs/ folder if it exists, any free port
      await writeFile(settingsFile, JSON.stringify({ apiKey: 'x' }));
      expect(await tlsSettings({ env: {}, settingsFile, home })).toEqual({
        domains: {},
        certsDir: join(home, 'certs'),
        certsDirOptional: true,
        port: 0,
        watchIntervalMs: 2000,
      });
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
