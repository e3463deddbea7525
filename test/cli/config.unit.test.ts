import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { displayUrl, planConnection, resolveConnection } from '../../src/cli/config.js';
import { configPath, readConfig, writeConfig, type ConfigFile } from '../../src/cli/config-file.js';
import type { CommandContext, GlobalOptions } from '../../src/cli/context.js';
import { UserError } from '../../src/shared/errors.js';
import { Output } from '../../src/cli/output.js';
import { createSandbox, type Sandbox } from '../support/cli.js';

let sandbox: Sandbox;
let stderr: string;

beforeEach(async () => {
  sandbox = await createSandbox();
  stderr = '';
});
afterEach(async () => {
  await sandbox.cleanup();
});

function context(env: Record<string, string | undefined>, globals: Partial<GlobalOptions> = {}): CommandContext {
  const err = new PassThrough();
  err.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const out = new PassThrough();
  const io = { stdout: out, stderr: err, stdin: Readable.from([]), env: { ...sandbox.env, ...env }, cwd: sandbox.dir };
  return {
    io,
    globals: { json: false, quiet: false, color: false, debug: false, ...globals },
    out: new Output({ stdout: out, stderr: err, json: false, quiet: false, color: false, ci: false }),
    signal: new AbortController().signal,
  };
}

async function saveConfig(config: ConfigFile): Promise<void> {
  await writeConfig(sandbox.env.MCPCTL_CONFIG!, config);
}

async function failure(promise: Promise<unknown>): Promise<UserError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(UserError);
    return error as UserError;
  }
  throw new Error('expected a UserError');
}

const profiles: ConfigFile = {
  profiles: {
    default: { api_url: 'https://default.example.com', api_key: 'key-default' },
    ci: { api_url: 'https://ci.example.com/', api_key: 'key-ci' },
  },
  current: 'default',
};

describe('the config file path', () => {
  it('is MCPCTL_CONFIG, else XDG_CONFIG_HOME/mcpctl, else ~/.config/mcpctl', () => {
    expect(configPath({ MCPCTL_CONFIG: '/x/c.json', XDG_CONFIG_HOME: '/xdg', HOME: '/h' })).toBe('/x/c.json');
    expect(configPath({ XDG_CONFIG_HOME: '/xdg', HOME: '/h' })).toBe('/xdg/mcpctl/config.json');
    expect(configPath({ HOME: '/h' })).toBe('/h/.config/mcpctl/config.json');
  });
});

describe('resolving the service', () => {
  it('takes the profile in the file when nothing else is given', async () => {
    await saveConfig(profiles);
    const c = await resolveConnection(context({}));
    expect(c).toMatchObject({
      url: 'https://default.example.com',
      apiKey: 'key-default',
      urlSource: 'from profile default',
      keySource: 'from profile default',
    });
  });

  it('MCPCTL_API_URL and MCPCTL_API_KEY beat the file; --api-url beats MCPCTL_API_URL', async () => {
    await saveConfig(profiles);
    const fromEnv = await resolveConnection(
      context({ MCPCTL_API_URL: 'https://env.example.com', MCPCTL_API_KEY: 'key-env' }),
    );
    expect(fromEnv).toMatchObject({
      url: 'https://env.example.com',
      urlSource: 'from MCPCTL_API_URL',
      apiKey: 'key-env',
      keySource: 'from MCPCTL_API_KEY',
    });
    const fromFlag = await resolveConnection(
      context(
        { MCPCTL_API_URL: 'https://env.example.com', MCPCTL_API_KEY: 'key-env' },
        { apiUrl: 'https://flag.example.com' },
      ),
    );
    expect(fromFlag).toMatchObject({ url: 'https://flag.example.com', urlSource: 'from --api-url' });
  });

  it('--profile, then MCPCTL_PROFILE, then current choose the profile', async () => {
    await saveConfig(profiles);
    expect((await resolveConnection(context({ MCPCTL_PROFILE: 'ci' }))).apiKey).toBe('key-ci');
    expect((await resolveConnection(context({ MCPCTL_PROFILE: 'default' }, { profile: 'ci' }))).keySource).toBe(
      'from profile ci',
    );
    await saveConfig({ ...profiles, current: 'ci' });
    expect((await resolveConnection(context({}))).url).toBe('https://ci.example.com/');
  });

  it('a URL from elsewhere gets the key of the profile saved for that URL', async () => {
    await saveConfig(profiles);
    const c = await resolveConnection(context({ MCPCTL_API_URL: 'https://ci.example.com' }));
    expect(c).toMatchObject({ apiKey: 'key-ci', keySource: 'from profile ci', urlSource: 'from MCPCTL_API_URL' });
  });

  it('never sends a profile’s key to another URL', async () => {
    await saveConfig(profiles);
    const error = await failure(resolveConnection(context({}, { apiUrl: 'https://elsewhere.example.com' })));
    expect(error.exitCode).toBe(3);
    expect(error.message).toBe('no API key for https://elsewhere.example.com (from --api-url)');
    expect(error.hint).toBe('run `mcpctl login --api-url https://elsewhere.example.com`, or set MCPCTL_API_KEY');
    expect(`${error.message} ${error.hint}`).not.toMatch(/key-default|key-ci/);
  });

  it('an explicit profile that does not exist is a configuration error (exit 3) listing the known ones', async () => {
    await saveConfig({ profiles: { ci: profiles.profiles.ci! }, current: 'ci' });
    const error = await failure(resolveConnection(context({ MCPCTL_PROFILE: 'prod' })));
    expect(error.exitCode).toBe(3);
    expect(error.message).toContain('there is no profile "prod" (from MCPCTL_PROFILE)');
    expect(error.hint).toContain('known profiles: default (the local engine), ci');
  });

  it('the profile "default" is the local engine, also when another profile is current', async () => {
    await saveConfig({ profiles: { ci: profiles.profiles.ci! }, current: 'ci' });
    const loaded = await readConfig(sandbox.env.MCPCTL_CONFIG!);
    expect(planConnection(context({}), loaded)).toMatchObject({ local: false, url: 'https://ci.example.com/' });
    expect(planConnection(context({}, { profile: 'default' }), loaded)).toMatchObject({ local: true });
    expect(planConnection(context({ MCPCTL_PROFILE: 'default' }), loaded)).toMatchObject({ local: true });
    expect(planConnection(context({}), { ...loaded, config: { profiles: loaded.config.profiles } })).toMatchObject({
      local: true,
    });
  });

  it('a URL that is not http(s) names where it came from', async () => {
    const error = await failure(resolveConnection(context({ MCPCTL_API_URL: 'ftp://x', MCPCTL_API_KEY: 'k' })));
    expect(error.message).toBe('the service URL from MCPCTL_API_URL must start with http:// or https://: ftp://x');
  });

  it.each([
    ['http://127.0.0.1:7070/v1', 'http://127.0.0.1:7070'],
    ['https://mcp.example.com/api/v1/', 'https://mcp.example.com/api'],
  ])('a URL that ends with /v1 (%s) is refused with the base URL to use', async (url, base) => {
    const error = await failure(resolveConnection(context({ MCPCTL_API_URL: url, MCPCTL_API_KEY: 'k' })));
    expect(error.exitCode).toBe(3);
    expect(error.message).toMatch(/^the service URL from MCPCTL_API_URL ends with \/v1/);
    expect(error.hint).toContain(`give the base URL without it (${base})`);
    // a path that merely contains v1 elsewhere is a base URL like any other
    const connection = await resolveConnection(
      context({ MCPCTL_API_URL: 'https://v1.example.com/v1x', MCPCTL_API_KEY: 'k' }),
    );
    expect(connection.url).toBe('https://v1.example.com/v1x');
  });

  it('a file that is not JSON, or of the wrong shape, is a configuration error (exit 3) naming the path and fields', async () => {
    const path = sandbox.env.MCPCTL_CONFIG!;
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, '{ not json', { mode: 0o600 });
    const bad = await failure(resolveConnection(context({})));
    expect(bad.exitCode).toBe(3);
    expect(bad.message).toContain(`the config file ${path} is not valid JSON`);
    await writeFile(path, JSON.stringify({ profiles: { a: { api_url: 3 } }, current: [] }));
    const shape = await failure(resolveConnection(context({})));
    expect(shape.problems.map((p) => p.path)).toEqual(['current', 'profiles.a.api_url']);
  });

  it('does not need the config file when URL and key come from the environment', async () => {
    const path = sandbox.env.MCPCTL_CONFIG!;
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, '{ broken', { mode: 0o600 });
    const c = await resolveConnection(context({ MCPCTL_API_URL: 'https://env.example.com', MCPCTL_API_KEY: 'k' }));
    expect(c).toMatchObject({ url: 'https://env.example.com', keySource: 'from MCPCTL_API_KEY', profile: undefined });
  });

  it('warns when the file can be read by other users', async () => {
    await saveConfig(profiles);
    await chmod(sandbox.env.MCPCTL_CONFIG!, 0o644);
    await resolveConnection(context({}));
    expect(stderr).toContain(
      `warning: the config file ${sandbox.env.MCPCTL_CONFIG} can be read by other users; run: chmod 600`,
    );
  });

  it('does not warn about a private file', async () => {
    await saveConfig(profiles);
    await resolveConnection(context({}));
    expect(stderr).toBe('');
  });
});

describe('writing the config', () => {
  it('writes atomically with mode 0600 in a folder made 0700', async () => {
    const path = join(sandbox.dir, 'fresh', 'mcpctl', 'config.json');
    await writeConfig(path, profiles);
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual(profiles);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(dirname(path))).mode & 0o777).toBe(0o700);
    await writeConfig(path, { profiles: {} });
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ profiles: {} });
  });

  it('shows URLs without credentials', () => {
    expect(displayUrl('https://user:secret@example.com/base/')).toBe('https://example.com/base');
  });
});
