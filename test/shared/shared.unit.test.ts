import { describe, expect, it } from 'vitest';
import { displayPath, formatPath } from '../../src/shared/paths.js';
import { isSecretName } from '../../src/shared/secret-name.js';
import { VERSION } from '../../src/shared/version.js';

describe('isSecretName', () => {
  // the union of what the definition checker, the runtime's log redaction and the gateway's debug log each hid
  it.each([
    'API_KEY',
    'x-api-key',
    'OPENAI_API_KEY',
    'Authorization',
    'authorisation',
    'GITHUB_TOKEN',
    'token',
    'password',
    'DB_PASSWD',
    'DB_PASS',
    'pass',
    'GPG_PASSPHRASE',
    'CLIENT_SECRET',
    'AWS_ACCESS_KEY_ID',
    'private-key',
    'CREDENTIALS',
    'Cookie',
    'SESSION_ID',
    'sessionToken',
  ])('%s is a secret name', (name) => {
    expect(isSecretName(name)).toBe(true);
  });

  it.each(['HOME', 'PATH', 'LOG_LEVEL', 'COMPASS_URL', 'PASSENGER_COUNT', 'bypass', 'city', 'limit', 'KEYBOARD'])('%s is not', (name) => {
    expect(isSecretName(name)).toBe(false);
  });
});

describe('formatPath', () => {
  it.each([
    [[], ''],
    [['tools', 0, 'inputSchema', 'required', 1], 'tools[0].inputSchema.required[1]'],
    [['headers', 'X-API-Key'], 'headers.X-API-Key'],
    [['env', 'two words'], 'env["two words"]'],
    [['data', 'tools', 0, 'name'], 'data.tools[0].name'],
  ] as Array<[PropertyKey[], string]>)('%j → %s', (path, expected) => {
    expect(formatPath(path)).toBe(expected);
  });
});

describe('displayPath', () => {
  it.each([
    ['/work/app/server.yaml', '/work/app', 'server.yaml'],
    ['/work/app/sub/server.yaml', '/work/app', 'sub/server.yaml'],
    ['/work/other/server.yaml', '/work/app', '/work/other/server.yaml'],
    ['/work/app', '/work/app', '/work/app'],
  ])('%s from %s → %s', (path, cwd, expected) => {
    expect(displayPath(path, cwd)).toBe(expected);
  });
});

describe('VERSION', () => {
  it('is the package version', () => {
    expect(VERSION).toMatch(/^\d+\.\d+\.\d+/);
  });
});
