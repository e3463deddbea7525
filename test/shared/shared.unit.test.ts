import { describe, expect, it } from 'vitest';
import { isoTime } from '../../src/shared/iso-time.js';
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

  it.each(['HOME', 'PATH', 'LOG_LEVEL', 'COMPASS_URL', 'PASSENGER_COUNT', 'bypass', 'city', 'limit', 'KEYBOARD'])(
    '%s is not',
    (name) => {
      expect(isSecretName(name)).toBe(false);
    },
  );
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

describe('isoTime', () => {
  it('is what Date writes, for times spread over years, within a minute, and across minutes in either order', () => {
    const times = [
      0, 1, 999, 59_999, 60_000, 1_764_000_000_000, 1_764_000_059_999, 1_764_000_060_000, 1_764_000_000_000,
      253_402_300_799_999,
    ];
    for (let ms = 1_764_000_000_000; ms < 1_764_000_200_000; ms += 997) times.push(ms);
    for (let i = 0; i < 200; i++) times.push(Math.floor(Math.random() * 4_102_444_800_000));
    for (const ms of times) expect(isoTime(ms), String(ms)).toBe(new Date(ms).toISOString());
  });

  it('writes years outside 0000–9999, and fractions of a millisecond, as Date does', () => {
    for (const ms of [-1, -62_198_755_200_001, 253_402_300_800_000, 1_764_000_000_000.5, 1_764_000_000_000]) {
      expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    }
  });

  it('refuses an invalid time as Date does', () => {
    isoTime(1_764_000_000_000);
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
    expect(() => isoTime(8.64e15 + 1)).toThrow(RangeError);
  });
});
