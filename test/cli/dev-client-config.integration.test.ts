/**
 * What `mcpctl dev` prints for desktop clients works where it is pasted: this installation's mcpctl
 * by absolute paths (never `npx mcpctl`, which would ask the registry for whatever holds that name),
 * and an `env` with every variable the server needs, secrets as placeholders. And the port stays the
 * same across restarts of the same file, so a pasted URL keeps working.
 */
import { cp, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startDev } from '../support/dev-session.js';
import { FIXTURES, closeServer, makeTempDir } from '../support/runtime.js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'mcpctl.cjs');

async function copyFixture(root: string): Promise<string> {
  await cp(join(FIXTURES, 'dev'), join(root, 'dev'), { recursive: true });
  return join(root, 'dev', 'server.yaml');
}

interface Ready {
  mcp_url: string;
  client_config: {
    stdio: { mcpServers: Record<string, { command: string; args: string[]; env?: Record<string, string> }> };
    http: { mcpServers: Record<string, { url: string; headers?: Record<string, string> }> };
  };
}

describe('mcpctl dev: client configurations', () => {
  it('fills the env from the definition: plain values from the environment, secrets as placeholders', async () => {
    await using temp = await makeTempDir();
    const file = await copyFixture(temp.path);
    const source = await readFile(file, 'utf8');
    await writeFile(
      file,
      source.replace('template: basic\n', 'template: basic\nauth:\n  type: bearer\n  token: ${DEV_TOKEN}\n') +
        '  - uri: api://status\n    name: status\n    description: remote status\n    source: { type: url, url: "${STATUS_URL}/status" }\n',
    );
    const env = { DEV_TOKEN: 'dev-token-0123456789', STATUS_URL: 'http://127.0.0.1:9/api', MCPCTL_HOME: temp.path };
    await using dev = startDev([file, '--json'], { env });
    await dev.waitFor(/"client_config"[\s\S]*\n}\n/);
    const ready = JSON.parse(dev.stdout()) as Ready;
    expect(ready.client_config.stdio.mcpServers.devloop).toEqual({
      command: process.execPath,
      args: [BIN, 'dev', '--stdio', file],
      env: { DEV_TOKEN: '<DEV_TOKEN>', STATUS_URL: 'http://127.0.0.1:9/api' },
    });
    expect(ready.client_config.http.mcpServers.devloop).toEqual({
      type: 'http',
      url: ready.mcp_url,
      headers: { Authorization: 'Bearer <DEV_TOKEN>' },
    });
    expect(dev.stdout()).not.toContain('dev-token-0123456789');
    expect(await dev.stop()).toBe(0);
  });

  it('keeps the port of a file across restarts, and takes another when that one is taken', async () => {
    await using temp = await makeTempDir();
    const file = await copyFixture(temp.path);
    const env = { MCPCTL_HOME: join(temp.path, 'home') };
    const first = startDev([file], { env });
    const [, port] = await first.waitFor(/MCP URL\s+http:\/\/127\.0\.0\.1:(\d+)\/mcp/);
    expect(await first.stop()).toBe(0);

    const again = startDev([file], { env });
    await again.waitFor(new RegExp(`MCP URL\\s+http://127\\.0\\.0\\.1:${port}/mcp`));
    expect(await again.stop()).toBe(0);
    expect(JSON.parse(await readFile(join(temp.path, 'home', 'dev-ports.json'), 'utf8'))).toMatchObject({
      [file]: { port: Number(port) },
    });

    // held by something else now: any free port, and a word about it
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(Number(port), '127.0.0.1', resolve));
    try {
      const moved = startDev([file], { env });
      const [, newPort] = await moved.waitFor(/MCP URL\s+http:\/\/127\.0\.0\.1:(\d+)\/mcp/);
      expect(newPort).not.toBe(port);
      expect(moved.stderr()).toContain(`port ${port}, which`);
      expect(moved.stderr()).toContain('had last time, is taken');
      expect(await moved.stop()).toBe(0);
    } finally {
      await closeServer(holder);
    }

    // --port still wins over what is remembered
    const chosen = startDev([file, '--port', '0'], { env });
    await chosen.waitFor(/MCP URL/);
    expect(await chosen.stop()).toBe(0);
  });
});
