/**
 * `mcpctl dev`: serves a definition on a loopback port, prints the URL and client configuration,
 * logs requests, reloads on change (keeping the last good server when an edit is broken), stops
 * on Ctrl-C, and serves over stdio for clients that start it themselves.
 */
import { describe, expect, it } from 'vitest';
import { cp, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { FIXTURES, closeServer, connect, firstText, listen, makeTempDir } from '../support/runtime.js';
import { startDev } from '../support/dev-session.js';
import { eventually } from '../support/wait.js';

async function copyFixture(root: string): Promise<string> {
  await cp(join(FIXTURES, 'dev'), join(root, 'dev'), { recursive: true });
  return join(root, 'dev', 'server.yaml');
}

describe('mcpctl dev', () => {
  it('prints the MCP URL and ready-to-paste client configuration, and logs each request', async () => {
    await using temp = await makeTempDir();
    const file = await copyFixture(temp.path);
    await using dev = startDev([file, '--port', '0']);
    const [, mcpUrl] = await dev.waitFor(/MCP URL\s+(http:\/\/127\.0\.0\.1:\d+\/mcp)/);
    const banner = dev.stdout();
    expect(banner).toContain('devloop 0.1.0 is serving 1 tool, 1 resource, 0 prompts');
    // this installation, by absolute paths: a desktop app has its own PATH and folder, and `npx mcpctl` asks the registry
    const bin = join(import.meta.dirname, '..', '..', 'bin', 'mcpctl.cjs');
    expect(banner).toContain(
      JSON.stringify(
        { mcpServers: { devloop: { command: process.execPath, args: [bin, 'dev', '--stdio', file] } } },
        null,
        2,
      ),
    );
    expect(banner).not.toContain('npx');
    expect(banner).toContain(JSON.stringify({ mcpServers: { devloop: { type: 'http', url: mcpUrl } } }, null, 2));

    await using client = await connect(mcpUrl!, { headers: { 'X-MCP-User-Id': 'zoe' } });
    expect(firstText(await client.callTool({ name: 'hello', arguments: { name: 'Ann' } }))).toBe('Hello, Ann!');
    await dev.waitFor(/tools\/call hello {2}200 {2}[\d.]+ ms {2}user=zoe/);
    expect(await dev.stop()).toBe(0);
  });

  it('reloads when the definition or a referenced file changes, and keeps the last good server on a broken edit', async () => {
    await using temp = await makeTempDir();
    const file = await copyFixture(temp.path);
    await using dev = startDev([file, '--port', '0']);
    const [, mcpUrl] = await dev.waitFor(/MCP URL\s+(http:\/\/\S+\/mcp)/);
    await using client = await connect(mcpUrl!);

    const source = await readFile(file, 'utf8');
    await writeFile(file, source.replace('"Hello, {{args.name}}!"', '"Hi there, {{args.name}}."'));
    await dev.waitFor(/reloaded .*server\.yaml: 1 tool, 1 resource, 0 prompts/, 'stderr');
    expect(firstText(await client.callTool({ name: 'hello', arguments: { name: 'Bo' } }))).toBe('Hi there, Bo.');

    await writeFile(join(temp.path, 'dev', 'greeting.txt'), 'second version\n');
    await eventually(async () =>
      expect((await client.readResource({ uri: 'text://greeting' })).contents[0]).toMatchObject({
        text: 'second version\n',
      }),
    );

    await writeFile(file, source.replace('name: hello', 'name: "hello world!"'));
    await dev.waitFor(/reload failed; still serving the last good version[\s\S]*server\.yaml:\d+:\d+/, 'stderr');
    expect(firstText(await client.callTool({ name: 'hello', arguments: { name: 'Cy' } }))).toBe('Hi there, Cy.');

    // undoing the broken edit brings back the version being served: say that the error is over
    await writeFile(file, source.replace('"Hello, {{args.name}}!"', '"Hi there, {{args.name}}."'));
    await dev.waitFor(/reload failed[\s\S]*server\.yaml is valid again; it is the version being served/, 'stderr');
    expect(firstText(await client.callTool({ name: 'hello', arguments: { name: 'Di' } }))).toBe('Hi there, Di.');
    expect(await dev.stop()).toBe(0);
  });

  it('says what the printed client configurations leave out: variables to set and the bearer token', async () => {
    await using temp = await makeTempDir();
    const file = await copyFixture(temp.path);
    const source = await readFile(file, 'utf8');
    await writeFile(
      file,
      source.replace('template: basic\n', 'template: basic\nauth:\n  type: bearer\n  token: ${DEV_TOKEN}\n'),
    );
    await using dev = startDev([file, '--port', '0'], { env: { DEV_TOKEN: 'dev-token-0123456789' } });
    await dev.waitFor(/watching/);
    expect(dev.stdout()).toContain('a client that starts it must set DEV_TOKEN in its "env"');
    expect(dev.stdout()).toContain('clients must send the bearer token (DEV_TOKEN)');
    expect(dev.stdout()).not.toContain('dev-token-0123456789');
    expect(await dev.stop()).toBe(0);
  });

  it('names missing variables and refuses to start', async () => {
    await using temp = await makeTempDir();
    const file = await copyFixture(temp.path);
    const source = await readFile(file, 'utf8');
    await writeFile(
      file,
      `${source.trimEnd()}\n  - uri: api://status\n    name: status\n    description: remote status\n    source: { type: url, url: "\${STATUS_URL}/status" }\n`,
    );
    const dev = startDev([file, '--port', '0']);
    expect(await dev.stop()).toBe(2);
    expect(dev.stderr()).toMatch(
      /cannot be served[\s\S]*STATUS_URL is not set \(used by resources\[1\]\.source\.url\)/,
    );
  });

  it('says when the port is taken', async () => {
    await using temp = await makeTempDir();
    const file = await copyFixture(temp.path);
    const taken = await listen(() => {});
    try {
      const port = new URL(taken.url).port;
      const dev = startDev([file, '--port', port]);
      await dev.waitFor(/port \d+ on 127\.0\.0\.1 is in use/, 'stderr');
      expect(await dev.stop()).toBe(2);
    } finally {
      await closeServer(taken.server);
    }
  });

  it('serves over stdio with nothing else on stdout', async () => {
    const bin = join(import.meta.dirname, '..', '..', 'bin', 'mcpctl.cjs');
    expect(existsSync(join(import.meta.dirname, '..', '..', 'dist', 'cli', 'commands', 'dev.js'))).toBe(true);
    await using temp = await makeTempDir();
    const file = await copyFixture(temp.path);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin, 'dev', '--stdio', file],
      env: { PATH: process.env.PATH ?? '' },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const client = new Client({ name: 'stdio-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      expect(client.getServerVersion()).toMatchObject({ name: 'devloop' });
      expect(firstText(await client.callTool({ name: 'hello', arguments: { name: 'Io' } }))).toBe('Hello, Io!');
      expect((await client.readResource({ uri: 'text://greeting' })).contents[0]).toMatchObject({
        text: 'first version\n',
      });
      expect(stderr).toContain('devloop 0.1.0 is serving over stdio');
      expect(stderr).toMatch(/tools\/call hello/);
    } finally {
      await client.close();
    }
  });
});
