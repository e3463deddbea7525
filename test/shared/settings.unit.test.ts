/**
 * The settings registry: one order of resolution (flag, variable, settings file, default), messages
 * that name the setting, the value and what it takes, every `MCPCTL_*` name of src/ declared, and the
 * generated pages in step with the registry.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { number, oneOf, port, wholeNumber, list, flagOne } from '../../src/shared/setting-parsers.js';
import { defineSetting, valueAtKey } from '../../src/shared/settings-resolver.js';
import {
  ALL_SETTINGS,
  resolveSetting,
  SettingError,
  SETTINGS,
  settingValue,
  settingValueOrDefault,
} from '../../src/shared/settings.js';
import { REGENERATE, settingsPage, tuningPage, withReadmeTable } from '../../src/shared/settings-docs.js';

const ROOT = join(import.meta.dirname, '..', '..');

const sample = defineSetting({
  env: 'MCPCTL_SAMPLE_PORT',
  key: 'sample.port',
  flag: '--sample-port',
  parser: port,
  default: 0,
  doc: 'a port',
  audience: 'user',
  group: 'engine',
});
const file = (values: Record<string, unknown>) => ({ path: '/home/e/engine-settings.json', values });

describe('resolving a setting', () => {
  it('takes the flag, else the variable, else the settings file, else the default, and says which', () => {
    const inFile = file({ sample: { port: 7443 } });
    const env = { MCPCTL_SAMPLE_PORT: '8443' };
    expect(resolveSetting(sample, { env, file: inFile, flag: 9443 })).toEqual({ value: 9443, from: '--sample-port' });
    expect(resolveSetting(sample, { env, file: inFile })).toEqual({ value: 8443, from: 'MCPCTL_SAMPLE_PORT' });
    expect(resolveSetting(sample, { env: {}, file: inFile })).toEqual({
      value: 7443,
      from: '"sample.port" in /home/e/engine-settings.json',
    });
    expect(resolveSetting(sample, { env: {} })).toEqual({ value: 0, from: 'default' });
  });

  it('takes a blank variable or flag, and an empty or null value of the file, as unset', () => {
    expect(settingValue(sample, { env: { MCPCTL_SAMPLE_PORT: ' ' }, flag: '' })).toBe(0);
    expect(settingValue(sample, { env: {}, file: file({ sample: { port: '' } }) })).toBe(0);
    expect(settingValue(sample, { env: {}, file: file({ sample: { port: null } }) })).toBe(0);
  });

  it('with `whiteSpace: value`, hands white space to the parser; an empty variable is still unset', () => {
    expect(settingValue(SETTINGS.apiKey, { env: { MCPCTL_API_KEY: '   ' }, whiteSpace: 'value' })).toBe('   ');
    expect(settingValue(SETTINGS.apiKey, { env: { MCPCTL_API_KEY: '   ' } })).toBeUndefined();
    expect(settingValue(SETTINGS.apiKey, { env: { MCPCTL_API_KEY: '' }, whiteSpace: 'value' })).toBeUndefined();
    expect(() => settingValue(sample, { env: { MCPCTL_SAMPLE_PORT: ' ' }, whiteSpace: 'value' })).toThrow(
      /MCPCTL_SAMPLE_PORT/,
    );
  });

  it('is undefined for a setting without a default that is not set', () => {
    expect(resolveSetting(SETTINGS.tlsCert, { env: {} })).toBeUndefined();
    expect(settingValue(SETTINGS.apiKey, { env: { MCPCTL_API_KEY: 'k' } })).toBe('k');
  });

  it('names the setting, the value and what it takes; a reader may choose its kind of error', () => {
    expect(() => settingValue(sample, { env: { MCPCTL_SAMPLE_PORT: 'many' } })).toThrow(SettingError);
    expect(() => settingValue(sample, { env: { MCPCTL_SAMPLE_PORT: 'many' } })).toThrow(
      'MCPCTL_SAMPLE_PORT must be a port number from 0 to 65535, not "many"',
    );
    expect(() => settingValue(sample, { env: {}, file: file({ sample: { port: [1] } }) })).toThrow(
      '"sample.port" in /home/e/engine-settings.json must be a port number from 0 to 65535, not [1]',
    );
    class OwnError extends Error {}
    expect(() => settingValue(sample, { env: {}, flag: 70_000 }, (message) => new OwnError(message))).toThrow(OwnError);
  });

  it('gives the default and the problem for a setting whose mistake must not stop anything', () => {
    expect(settingValueOrDefault(sample, { env: { MCPCTL_SAMPLE_PORT: '80' } })).toEqual({ value: 80 });
    expect(settingValueOrDefault(sample, { env: { MCPCTL_SAMPLE_PORT: '-1' } })).toEqual({
      value: 0,
      problem: 'MCPCTL_SAMPLE_PORT must be a port number from 0 to 65535, not "-1"',
    });
  });

  it('reads a file value with the setting’s own parser for the file when it has one', () => {
    const swarm = (values: Record<string, unknown>) => ({ env: {}, file: file({ swarm: values }) });
    expect(settingValue(SETTINGS.swarm, swarm({ enabled: false }))).toBe('off');
    expect(() => settingValue(SETTINGS.swarm, swarm({ enabled: 'off' }))).toThrow('must be true or false, not "off"');
    expect(settingValue(SETTINGS.swarm, { env: { MCPCTL_SWARM: 'off' } })).toBe('off');
  });

  it('finds a dotted key, and nothing under a value that is not an object', () => {
    expect(valueAtKey({ tuning: { warm_pool: 2 } }, 'tuning.warm_pool')).toBe(2);
    expect(valueAtKey({ tuning: 'x' }, 'tuning.warm_pool')).toBeUndefined();
    expect(valueAtKey({}, 'runner')).toBeUndefined();
  });
});

describe('parsers', () => {
  it.each([
    [wholeNumber(1), '3', 3],
    [wholeNumber(1), ' 3 ', 3],
    [wholeNumber(1), '0', undefined],
    [wholeNumber(1), '2.5', undefined],
    [wholeNumber(0, 64), 64, 64],
    [wholeNumber(0, 64), '65', undefined],
    [number(0, { inclusive: true, allowed: '' }), '0', 0],
    [number(0, { inclusive: false, allowed: '' }), '0', undefined],
    [number(0, { inclusive: false, allowed: '' }), 'Infinity', undefined],
    [port, '65535', 65_535],
    [port, 'x', undefined],
    [oneOf(['a', 'b']), 'b', 'b'],
    [oneOf(['a', 'b']), 'B', undefined],
    [oneOf(['a', 'b'], { ignoreCase: true }), ' B ', 'b'],
    [list(',', ''), 'a, b,,c', ['a', 'b', 'c']],
    [list(':', ''), '/opt/x:/srv', ['/opt/x', '/srv']],
    [flagOne, '1', true],
    [flagOne, 'yes', false],
  ])('%#: %j → %j', (parser, raw, expected) => {
    expect((parser as { parse(raw: unknown): unknown }).parse(raw)).toEqual(expected);
  });
});

describe('the registry', () => {
  it('declares each variable and each settings-file key once, tuning knobs of the engine under `tuning`', () => {
    const envs = ALL_SETTINGS.map((setting) => setting.env);
    expect(new Set(envs).size).toBe(envs.length);
    const keys = ALL_SETTINGS.flatMap((setting) => (setting.key === undefined ? [] : [setting.key]));
    expect(new Set(keys).size).toBe(keys.length);
    for (const setting of ALL_SETTINGS) {
      // OpenTelemetry's own variables keep their standard names
      expect(setting.env).toMatch(/^(MCPCTL|OTEL)_[A-Z0-9_]+$/);
      if (setting.key?.startsWith('tuning.')) expect(setting.audience).toBe('tuning');
      if (setting.audience === 'internal') expect(setting.key).toBeUndefined();
    }
  });

  it('declares every MCPCTL_* name the source reads or mentions', async () => {
    const declared = new Set(ALL_SETTINGS.map((setting) => setting.env));
    const undeclared: string[] = [];
    const src = join(ROOT, 'src');
    for (const name of (await readdir(src, { recursive: true })).filter((f) => f.endsWith('.ts'))) {
      const text = await readFile(join(src, name), 'utf8');
      for (const [found] of text.matchAll(/MCPCTL_[A-Z0-9_]+/g)) {
        // `MCPCTL_TLS_*` in prose names a family of settings
        const known = found.endsWith('_') ? [...declared].some((env) => env.startsWith(found)) : declared.has(found);
        if (!known) undeclared.push(`src/${name}: ${found}`);
      }
    }
    expect(undeclared, 'declare these in src/shared/settings.ts').toEqual([]);
  });
});

describe('the generated pages', () => {
  it.each([
    ['docs/settings.md', settingsPage],
    ['docs/tuning.md', tuningPage],
    ['README.md', () => undefined],
  ])('%s is what the registry writes', async (page, write) => {
    const current = await readFile(join(ROOT, page), 'utf8');
    const expected = write() ?? withReadmeTable(current);
    expect(current === expected, `${page} is out of date: run \`${REGENERATE}\``).toBe(true);
  });

  it('documents user settings in settings.md and the README, tuning knobs in tuning.md, internal ones nowhere', async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    for (const setting of ALL_SETTINGS) {
      const mention = `\`${setting.env}\``;
      expect(settingsPage().includes(mention), setting.env).toBe(setting.audience === 'user');
      expect(tuningPage().includes(mention), setting.env).toBe(setting.audience === 'tuning');
      if (setting.audience === 'user') expect(readme).toContain(mention);
    }
  });
});
