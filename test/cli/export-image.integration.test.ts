/**
 * `mcpctl export image` finds its definition as the other commands do: a file, a folder's
 * `server.yaml`, or `./server.yaml` with nothing named. No Docker host is needed to see which file
 * it read: a definition with a mistake is reported at its line before any image is built.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, runCli, type Sandbox } from '../support/cli.js';

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await createSandbox();
  await mkdir(join(sandbox.dir, 'pkg'));
  await mkdir(join(sandbox.dir, 'empty'));
  await writeFile(join(sandbox.dir, 'pkg', 'server.yaml'), 'name: broken\ntemplate: nope\n');
});
afterAll(async () => {
  await sandbox?.cleanup();
});

// a Docker host that cannot answer, in case a definition were ever read as valid
const exportImage = (args: string[], cwd: string) =>
  runCli(['export', 'image', ...args], { env: { ...sandbox.env, DOCKER_HOST: 'tcp://127.0.0.1:9' }, cwd });

describe('mcpctl export image [file|folder]', () => {
  it('reads the server.yaml of a folder (seen: a folder was refused)', async () => {
    const result = await exportImage(['pkg'], sandbox.dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('pkg/server.yaml:2:11');
  });

  it('reads ./server.yaml when nothing is named, and says so', async () => {
    const result = await exportImage([], join(sandbox.dir, 'pkg'));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('using server.yaml');
    expect(result.stderr).toContain('server.yaml:2:11');
  });

  it('a folder without a server.yaml, or none here, says what to name', async () => {
    const here = await exportImage([], join(sandbox.dir, 'empty'));
    expect(here.code).toBe(2);
    expect(here.stderr).toContain('there is no server.yaml in this folder');
    const named = await exportImage(['empty'], sandbox.dir);
    expect(named.code).toBe(2);
    expect(named.stderr).toContain('there is no server.yaml in empty');
  });

  it('a build id is refused: its bundle is on the service that built it', async () => {
    const result = await exportImage(['mcp_4k2j9x7q1m'], sandbox.dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('needs the definition file, not a build id');
  });
});
