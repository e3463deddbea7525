/**
 * serve-bundle's `--values-file`: how a container gets the deployment's values without `Env`. The
 * values reach the definition's modules, each is hidden from the error texts of tool calls and from
 * the log, the file is deleted once read, and a file that cannot be used stops the start with a
 * message naming it. `--env-is-secret` leaves a container's own variables (HOME) visible.
 * Real serve-bundle process from dist/.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BuildRequestInput } from '../../src/api/contract.js';
import { writeBundle } from '../../src/runtime/host/bundle.js';
import { requireBuilt, ROOT } from '../support/app.js';
import { connect, firstText } from '../support/runtime.js';
import { tempDir, type TempDir } from '../support/temp.js';

beforeAll(() => requireBuilt());

const SECRET = 'postgres://u:pw-91c3e7a5@db/app';
const SERVER: BuildRequestInput = {
  name: 'envfile',
  template: 'custom',
  tools: [
    {
      name: 'connect',
      description: 'Fails quoting its URL',
      inputSchema: { type: 'object' },
      handler: { type: 'module', module: 'tools.mjs' },
    },
    {
      name: 'home',
      description: 'Fails quoting HOME',
      inputSchema: { type: 'object' },
      handler: { type: 'module', module: 'tools.mjs' },
    },
  ],
  files: {
    'tools.mjs': {
      encoding: 'utf8',
      content:
        "export function connect() { throw new Error('cannot connect to ' + process.env.DATABASE_URL); }\n" +
        "export function home() { throw new Error('home is ' + process.env.HOME); }\n",
    },
  },
};

const temps: TempDir[] = [];
const stops: Array<() => void> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) stop();
  for (const temp of temps.splice(0)) await temp.cleanup();
});

/** serve-bundle on the bundle with `args`; the first line it prints, and everything it printed once it ends. */
function serve(bundle: string, args: string[], env: Record<string, string>) {
  const child = spawn(
    process.execPath,
    [join(ROOT, 'dist', 'runtime', 'serve-bundle.js'), '--bundle', bundle, '--port', '0', ...args],
    {
      env: { PATH: process.env.PATH!, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  stops.push(() => child.kill('SIGKILL'));
  const output: string[] = [];
  const lines = createInterface({ input: child.stdout });
  const first = new Promise<string>((resolve) => lines.once('line', resolve));
  lines.on('line', (line) => output.push(line));
  child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const ended = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, first, output, ended };
}

describe('serve-bundle --values-file', () => {
  it('loads the values, hides each, and deletes the file; a container variable stays visible (ATTACK: a module error quoting a value)', async () => {
    const temp = await tempDir('mcpctl-env-file-');
    temps.push(temp);
    const { dir } = await writeBundle(SERVER, temp.dir);
    const file = join(temp.dir, 'values.json');
    await writeFile(file, JSON.stringify({ DATABASE_URL: SECRET }), { mode: 0o400 });
    const served = serve(dir, ['--env-is-secret', '--values-file', file], { HOME: '/home/app-user' });
    const listening = JSON.parse(await served.first) as { event: string; url: string };
    expect(listening.event).toBe('listening');
    expect(existsSync(file)).toBe(false);

    await using client = await connect(`${listening.url}/mcp`);
    const failed = await client.callTool({ name: 'connect', arguments: {} });
    expect(failed.isError).toBe(true);
    expect(firstText(failed)).toContain('cannot connect to [redacted]');
    expect(JSON.stringify(failed)).not.toContain(SECRET);
    expect(firstText(await client.callTool({ name: 'home', arguments: {} }))).toContain('home is /home/app-user');
    served.child.kill('SIGTERM');
    await served.ended;
    expect(served.output.join('\n')).not.toContain(SECRET);
  });

  it('refuses to start on a file it cannot use, naming it', async () => {
    const temp = await tempDir('mcpctl-env-file-');
    temps.push(temp);
    const { dir } = await writeBundle(SERVER, temp.dir);
    const missing = serve(dir, ['--values-file', join(temp.dir, 'nope.json')], {});
    expect(await missing.ended).toBe(1);
    expect(missing.output.join('\n')).toContain(
      `the values file ${join(temp.dir, 'nope.json')} cannot be read (ENOENT)`,
    );
    const bad = join(temp.dir, 'bad.json');
    await writeFile(bad, JSON.stringify({ 'NOT A NAME': 1 }));
    const refused = serve(dir, ['--values-file', bad], {});
    expect(await refused.ended).toBe(1);
    expect(refused.output.join('\n')).toContain('which is not NAME: "string"');
    expect(refused.output.join('\n')).not.toMatch(/\n\s+at /);
  });
});
