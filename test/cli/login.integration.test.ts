import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanKey } from '../../src/cli/commands/login.js';
import { TEST_KEY } from '../support/app.js';
import { runCli, WEATHER_YAML, type Sandbox } from '../support/cli.js';
import { startTestEngine, type TestEngine } from '../support/engine.js';
import { startProxy, type Proxy } from '../support/proxy.js';

type Service = Proxy & { apiKey: string };
let t: TestEngine;
let server: Service;
let sandbox: Sandbox;

/** A recording proxy in front of an engine: what `login` checks the key against. */
async function service(engine: TestEngine): Promise<Service> {
  return Object.assign(await startProxy(engine.engine.url), { apiKey: TEST_KEY });
}

/** An engine per case behind a recording proxy: for the cases that log in or out. */
function withService(): void {
  beforeEach(async () => {
    t = await startTestEngine();
    server = await service(t);
    // the CLI's own sandbox, apart from the engine's: no MCPCTL_API_URL, so login decides where commands go
    sandbox = t.sandbox;
    await writeFile(join(sandbox.dir, 'weather.yaml'), WEATHER_YAML);
  });
  afterEach(async () => {
    await server.close();
    await t.close();
  });
}

const cli = (args: string[], options: { stdin?: string; env?: Record<string, string> } = {}) =>
  runCli(args, {
    env: { ...sandbox.env, ...options.env },
    cwd: sandbox.dir,
    ...(options.stdin === undefined ? {} : { stdin: options.stdin }),
  });

interface SavedConfig {
  profiles: Record<string, { api_url?: string; api_key?: string }>;
  current?: string;
}

async function readConfigFile(): Promise<SavedConfig> {
  return JSON.parse(await readFile(sandbox.env.MCPCTL_CONFIG!, 'utf8')) as SavedConfig;
}

/** A login that names no profile saves one named after the service's host. */
const hostProfile = () => new URL(server.url).host.replace(':', '-');

describe('mcpctl login', () => {
  withService();

  it('reads the key from stdin, checks it, saves it 0600 in a 0700 folder, and never prints it', async () => {
    const result = await cli(['login', '--api-url', server.url, '--with-key'], { stdin: `${server.apiKey}\n` });
    expect(result.code).toBe(0);
    const name = hostProfile();
    expect(result.stdout).toContain(`✔ Logged in to ${server.url} (profile ${name})`);
    // it changes where commands go, and says so
    expect(result.stdout).toContain(
      `! ${name} is now the current profile: commands go to ${server.url} (before: the local engine)`,
    );
    expect(result.stdout).toContain('→ go back with: mcpctl config use default');
    expect(result.stdout + result.stderr).not.toContain(server.apiKey);
    expect(server.requestsTo('/v1/servers')[0]!.headers.authorization).toBe(`Bearer ${server.apiKey}`);
    expect(await readConfigFile()).toEqual({
      profiles: { [name]: { api_url: server.url, api_key: server.apiKey } },
      current: name,
    });
    expect((await stat(sandbox.env.MCPCTL_CONFIG!)).mode & 0o777).toBe(0o600);
    expect((await stat(dirname(sandbox.env.MCPCTL_CONFIG!))).mode & 0o777).toBe(0o700);
  });

  it('the saved profile is then used by the other commands', async () => {
    await cli(['login', '--api-url', server.url, '--with-key'], { stdin: server.apiKey });
    const build = await cli(['build', 'weather.yaml', '--json']);
    expect(build.code).toBe(0);
    expect(server.requestsTo('/v1/build')[0]!.headers.authorization).toBe(`Bearer ${server.apiKey}`);
  });

  it('--json prints the profile, never the key', async () => {
    const result = await cli(['login', '--api-url', server.url, '--with-key', '--json'], { stdin: server.apiKey });
    expect(result.json()).toEqual({
      profile: hostProfile(),
      api_url: server.url,
      config_file: sandbox.env.MCPCTL_CONFIG,
      verified: true,
      current: true,
      previous_current: 'default',
    });
    expect(result.stdout).not.toContain(server.apiKey);
  });

  it('a rejected key is exit 3 and nothing is saved', async () => {
    const result = await cli(['login', '--api-url', server.url, '--with-key'], { stdin: 'sk-wrong-key\n' });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('rejected this API key (HTTP 401); nothing was saved');
    expect(result.stdout + result.stderr).not.toContain('sk-wrong-key');
    await expect(stat(sandbox.env.MCPCTL_CONFIG!)).rejects.toThrow();
  });

  it('a service that does not list servers (404) is accepted without a check', async () => {
    server.inject({ path: '/v1/servers', fault: { type: 'status', status: 404, code: 'not_found' } });
    const result = await cli(['login', '--api-url', server.url, '--with-key'], { stdin: server.apiKey });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('was not checked');
    expect((await readConfigFile()).profiles[hostProfile()]!.api_key).toBe(server.apiKey);
  });

  it('an unreachable service is exit 4 and nothing is saved', async () => {
    await server.close();
    const result = await cli(['login', '--api-url', server.url, '--with-key'], { stdin: 'sk-x' });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('nothing was saved');
    await expect(stat(sandbox.env.MCPCTL_CONFIG!)).rejects.toThrow();
  });

  it('an empty key is exit 2', async () => {
    const result = await cli(['login', '--api-url', server.url, '--with-key'], { stdin: '\n' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('no API key was given (stdin)');
    expect(server.requests).toHaveLength(0);
  });

  it('without a URL it asks for --api-url', async () => {
    const result = await cli(['login', '--with-key'], { stdin: 'k' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('mcpctl login --api-url');
  });

  it('takes the URL from MCPCTL_API_URL', async () => {
    const result = await cli(['login', '--with-key', '--json'], {
      stdin: server.apiKey,
      env: { MCPCTL_API_URL: server.url },
    });
    expect(result.code).toBe(0);
    expect(result.json().api_url).toBe(server.url);
  });

  it('without --with-key and no terminal it says what to pass', async () => {
    const result = await cli(['login', '--api-url', server.url]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('pass --with-key');
  });

  it('--profile saves another profile and keeps the current one, saying how to switch', async () => {
    await cli(['login', '--api-url', server.url, '--with-key'], { stdin: server.apiKey });
    const otherEngine = await startTestEngine();
    const other = await service(otherEngine);
    try {
      const result = await cli(['login', '--profile', 'ci', '--api-url', other.url, '--with-key', '--json'], {
        stdin: other.apiKey,
      });
      expect(result.code).toBe(0);
      expect(result.json()).toMatchObject({ profile: 'ci', current: false });
      expect(result.json().previous_current).toBeUndefined();
      const human = await cli(['login', '--profile', 'ci', '--api-url', other.url, '--with-key'], {
        stdin: other.apiKey,
      });
      expect(human.stdout).toContain('use it with --profile ci, or make it current: mcpctl config use ci');
      expect(human.stdout).not.toContain('is now the current profile');
      const config = await readConfigFile();
      expect(config.current).toBe(hostProfile());
      expect(config.profiles.ci).toEqual({ api_url: other.url, api_key: other.apiKey });
      const build = await cli(['build', 'weather.yaml', '--quiet'], { env: { MCPCTL_PROFILE: 'ci' } });
      expect(build.code).toBe(0);
      expect(other.requestsTo('/v1/build')).toHaveLength(1);
      expect(server.requestsTo('/v1/build')).toHaveLength(0);
    } finally {
      await other.close();
      await otherEngine.close();
    }
  });
});

describe('mcpctl logout', () => {
  withService();

  it('removes the key; commands that name no profile go to the local engine again', async () => {
    await cli(['login', '--api-url', server.url, '--with-key'], { stdin: server.apiKey });
    const name = hostProfile();
    const result = await cli(['logout']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Removed the API key of profile ${name}`);
    expect(result.stdout).toContain(`! ${name} is no longer the current profile: commands go to the local engine`);
    expect(await readConfigFile()).toEqual({ profiles: { [name]: { api_url: server.url } } });
    const shown = await cli(['config', 'show', '--json']);
    expect(shown.code).toBe(0);
    expect(shown.json()).toMatchObject({ profile: { name: 'default' }, service: { local: true } });
    // naming the profile still says how to log in again
    const build = await cli(['build', 'weather.yaml', '--profile', name]);
    expect(build.code).toBe(3);
    expect(build.stderr).toContain(`no API key for ${server.url} (from profile ${name})`);
    expect(build.stderr).toContain(`mcpctl login --profile ${name} --api-url ${server.url}`);
  });

  it('a service saved as "default" by an earlier mcpctl goes with its key: default is the local engine again', async () => {
    await mkdir(dirname(sandbox.env.MCPCTL_CONFIG!), { recursive: true });
    await writeFile(
      sandbox.env.MCPCTL_CONFIG!,
      JSON.stringify({ profiles: { default: { api_url: server.url, api_key: server.apiKey } }, current: 'default' }),
      { mode: 0o600 },
    );
    const result = await cli(['logout']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Removed profile default and its key: "default" is the local engine again');
    expect(await readConfigFile()).toEqual({ profiles: {} });
  });

  it('with nothing saved it says so, exit 0', async () => {
    const result = await cli(['logout', '--json']);
    expect(result.code).toBe(0);
    expect(result.json()).toMatchObject({ profile: 'default', removed: false });
  });
});

describe('keys', () => {
  it('trims one trailing newline and refuses what cannot be a key', () => {
    expect(cleanKey('abc\n', 'stdin')).toBe('abc');
    expect(cleanKey('abc\r\n', 'stdin')).toBe('abc');
    expect(() => cleanKey('', 'stdin')).toThrow(/no API key/);
    expect(() => cleanKey('abc\n\n', 'stdin')).toThrow(/more than one line/);
    expect(() => cleanKey('a b', 'stdin')).toThrow(/spaces/);
  });
});
