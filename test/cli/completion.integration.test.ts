/**
 * `mcpctl completion bash|zsh|fish`: scripts written from the commander program, checked by each
 * shell that is installed (bash always; zsh and fish where present), and the bash script run as bash
 * runs it (COMP_WORDS and COMP_CWORD set, the completion function called). Deployment names come
 * from the engine when it runs, and nothing comes when none runs.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeProgram } from '../../src/cli/commands/completion.js';
import { createProgram, run } from '../../src/cli/main.js';
import { runCli } from '../support/cli.js';
import { startTestEngine, type TestEngine } from '../support/engine.js';
import { tempDir, type TempDir } from '../support/temp.js';

let temp: TempDir;
let dir: string;

beforeAll(async () => {
  temp = await tempDir('mcpctl-completion-');
  dir = temp.dir;
});
afterAll(async () => {
  await temp.cleanup();
});

const has = (shell: string) => spawnSync('sh', ['-c', `command -v ${shell}`]).status === 0;

async function script(shell: 'bash' | 'zsh' | 'fish'): Promise<string> {
  const result = await runCli(['completion', shell], { env: { MCPCTL_HOME: join(dir, 'home') }, cwd: dir });
  expect(result.code).toBe(0);
  expect(result.stderr).toBe('');
  const file = join(dir, `mcpctl.${shell}`);
  await writeFile(file, result.stdout);
  return file;
}

/**
 * What the bash script offers for a command line whose last word is being completed. `mcpctl` on
 * the PATH is a stand-in that prints the names it was asked for, so no engine is needed.
 */
function complete(file: string, line: string[], names = ''): string[] {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'names'), names);
  writeFileSync(join(bin, 'mcpctl'), `#!/bin/sh\n[ "$3" = --deployments ] && cat '${join(bin, 'names')}'\n`, {
    mode: 0o755,
  });
  const program = `
PATH='${bin}':$PATH
source '${file}'
COMP_WORDS=(${line.map((w) => `'${w}'`).join(' ')})
COMP_CWORD=${line.length - 1}
_mcpctl
printf '%s\\n' "\${COMPREPLY[@]}"`;
  const result = spawnSync('bash', ['-c', program], { encoding: 'utf8' });
  expect(result.stderr).toBe('');
  return result.stdout.split('\n').filter(Boolean);
}

describe('mcpctl completion', () => {
  it('bash: the script parses, and completes commands, options, choices and deployment names', async () => {
    const file = await script('bash');
    expect(spawnSync('bash', ['-n', file]).status).toBe(0);
    expect(complete(file, ['mcpctl', 'st'])).toEqual(['status', 'stop']);
    expect(complete(file, ['mcpctl', 'engine', 'st'])).toEqual(['start', 'stop', 'status']);
    expect(complete(file, ['mcpctl', 'logs', '--le'])).toEqual(['--level']);
    expect(complete(file, ['mcpctl', 'logs', '--level', ''])).toEqual(['debug', 'info', 'warn', 'error']);
    expect(complete(file, ['mcpctl', '--profile', 'x', 'deploy', '-e', 'p'])).toEqual(['production']);
    expect(complete(file, ['mcpctl', 'ls', '--status', 'dep'])).toEqual(['deploying', 'deployed']);
    expect(complete(file, ['mcpctl', 'completion', ''])).toEqual(['bash', 'zsh', 'fish']);
    // a global option after the command
    expect(complete(file, ['mcpctl', 'ls', '--js'])).toEqual(['--json']);
    // deployments: the names the script was given, filtered by what was typed
    const names = 'notes.production\nweather.production\nweather.staging\n';
    expect(complete(file, ['mcpctl', 'status', 'we'], names)).toEqual(['weather.production', 'weather.staging']);
    expect(complete(file, ['mcpctl', 'alerts', '--deployment', ''], names)).toHaveLength(3);
    expect(complete(file, ['mcpctl', 'logs', ''], '')).toEqual([]);
  });

  it.skipIf(!has('zsh'))('zsh: the script parses', async () => {
    expect(spawnSync('zsh', ['-n', await script('zsh')]).status).toBe(0);
  });

  it.skipIf(!has('fish'))('fish: the script parses', async () => {
    const result = spawnSync('fish', ['-n', await script('fish')], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('lists every visible command of the program, so the scripts never go stale', () => {
    const program = createProgram({ io: {} as never, signal: new AbortController().signal });
    const nodes = describeProgram(program as unknown as Parameters<typeof describeProgram>[0]);
    const commands = nodes.filter((node) => node.path.length === 1).map((node) => node.path[0]);
    expect(commands).toEqual(expect.arrayContaining(['deploy', 'status', 'logs', 'rollback', 'completion']));
    expect(nodes.find((node) => node.path.join(' ') === 'status')?.argument?.deployment).toBe(true);
    expect(nodes.find((node) => node.path.join(' ') === 'completion')?.options.flatMap((o) => o.flags)).not.toContain(
      '--deployments',
    );
  });

  it('an unknown shell is a usage error naming the choices', async () => {
    const result = await runCli(['completion', 'powershell'], { env: { MCPCTL_HOME: join(dir, 'home') }, cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('bash, zsh, fish');
  });
});

describe('mcpctl completion --deployments', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine();
  });
  afterAll(async () => {
    await t.close();
  });

  it('prints <server>.<env> of each deployment, sorted', async () => {
    await t.deploy(await t.addServer('weather'), 'production');
    await t.deploy(await t.addServer('notes'), 'development');
    const result = await runCli(['completion', 'bash', '--deployments'], { env: t.env, cwd: t.sandbox.dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('notes.development\nweather.production\n');
  });

  it('prints nothing, and starts no engine, when no local engine runs', async () => {
    const home = join(dir, 'idle-home');
    const started = Date.now();
    const code = await run(['completion', 'bash', '--deployments'], {
      env: { MCPCTL_HOME: home },
      cwd: dir,
      stdout: { write: (text: string) => expect(text).toBe('') } as never,
      stderr: { write: (text: string) => expect(text).toBe('') } as never,
    });
    expect(code).toBe(0);
    expect(Date.now() - started).toBeLessThan(5000);
    const status = await runCli(['engine', 'status', '--json'], { env: { MCPCTL_HOME: home }, cwd: dir });
    expect(status.json()).toMatchObject({ running: false });
  });
});
