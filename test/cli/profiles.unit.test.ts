/**
 * `mcpctl config show` and `config use`: where commands go, said without a key and without
 * starting the local engine; `default` is the local engine.
 */
import { readFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeConfig } from '../../src/cli/config-file.js';
import { createSandbox, runCli, type Sandbox } from '../support/cli.js';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(async () => {
  await sandbox.cleanup();
});

const cli = (args: string[], env: Record<string, string> = {}) =>
  runCli(args, { env: { ...sandbox.env, ...env }, cwd: sandbox.dir });

async function save(current?: string): Promise<void> {
  await writeConfig(sandbox.env.MCPCTL_CONFIG!, {
    profiles: {
      srv: { api_url: 'https://srv.example.com', api_key: 'key-srv-secret' },
      old: { api_url: 'https://old.example.com' },
    },
    ...(current === undefined ? {} : { current }),
  });
}

describe('mcpctl config show', () => {
  it('with no config file: the local engine, not running, started by the first command that needs it', async () => {
    const result = await cli(['config', 'show', '--json']);
    expect(result.code).toBe(0);
    expect(result.json()).toEqual({
      config_file: sandbox.env.MCPCTL_CONFIG,
      config_file_exists: false,
      profile: { name: 'default', source: 'default' },
      service: { local: true, home: sandbox.env.MCPCTL_HOME, running: false },
      request_timeout_seconds: 30,
      profiles: [{ name: 'default', local: true, current: true }],
    });
    const human = await cli(['config', 'show']);
    expect(human.stdout).toMatch(
      /service\s+the local engine \(not running; the first command that needs it starts it\)/,
    );
  });

  it('the current profile, its service and where its key comes from, every profile, and never a key', async () => {
    await save('srv');
    const result = await cli(['config', 'show', '--json']);
    expect(result.json()).toMatchObject({
      profile: { name: 'srv', source: 'current in the config file' },
      service: { local: false, url: 'https://srv.example.com', source: 'from profile srv', key: 'from profile srv' },
      profiles: [
        { name: 'default', local: true, current: false },
        { name: 'old', local: false, api_url: 'https://old.example.com', key_saved: false, current: false },
        { name: 'srv', local: false, api_url: 'https://srv.example.com', key_saved: true, current: true },
      ],
    });
    const human = await cli(['config', 'show']);
    expect(human.stdout).toMatch(/srv\s+https:\/\/srv\.example\.com\s+saved\s+current/);
    for (const output of [result.stdout, human.stdout, human.stderr]) expect(output).not.toContain('key-srv-secret');
    expect((await cli(['config', 'show', '-q'])).stdout).toBe('srv\n');
  });

  it('says what the environment and flags choose over the file', async () => {
    await save('srv');
    const result = await cli(['config', 'show', '--json', '--profile', 'default']);
    expect(result.json()).toMatchObject({
      profile: { name: 'default', source: 'from --profile' },
      service: { local: true },
    });
    const env = await cli(['config', 'show', '--json'], {
      MCPCTL_API_URL: 'https://ci.example.com',
      MCPCTL_API_KEY: 'k',
      MCPCTL_REQUEST_TIMEOUT: '90',
    });
    expect(env.json()).toMatchObject({
      service: {
        local: false,
        url: 'https://ci.example.com',
        source: 'from MCPCTL_API_URL',
        key: 'from MCPCTL_API_KEY',
      },
      request_timeout_seconds: 90,
    });
  });
});

describe('mcpctl config use', () => {
  it('makes a profile current, and default the local engine again', async () => {
    await save();
    const use = await cli(['config', 'use', 'srv']);
    expect(use.code).toBe(0);
    expect(use.stdout).toContain(
      '✔ srv is now the current profile: commands go to https://srv.example.com (before: default)',
    );
    expect(JSON.parse(await readFile(sandbox.env.MCPCTL_CONFIG!, 'utf8')).current).toBe('srv');

    const again = await cli(['config', 'use', 'srv', '--json']);
    expect(again.json()).toMatchObject({ profile: 'srv', previous: 'srv', changed: false });

    const back = await cli(['config', 'use', 'default']);
    expect(back.stdout).toContain(
      '✔ default is now the current profile: commands go to the local engine (before: srv)',
    );
    expect(JSON.parse(await readFile(sandbox.env.MCPCTL_CONFIG!, 'utf8')).current).toBeUndefined();
  });

  it('warns of a profile without a key, and of MCPCTL_PROFILE winning over the current profile', async () => {
    await save();
    const result = await cli(['config', 'use', 'old'], { MCPCTL_PROFILE: 'srv' });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('! MCPCTL_PROFILE is set here and wins over the current profile');
    expect(result.stdout).toContain('! profile old has no saved key: run mcpctl login --profile old');
  });

  it('an unknown profile is a configuration error naming the known ones', async () => {
    await save();
    const result = await cli(['config', 'use', 'prod', '--json']);
    expect(result.code).toBe(3);
    expect(result.json().error).toMatchObject({
      code: 'bad_config',
      message: `there is no profile "prod" in ${sandbox.env.MCPCTL_CONFIG}`,
      hint: 'known profiles: default (the local engine), old, srv; save another with: mcpctl login --profile prod --api-url <url>',
    });
  });
});
