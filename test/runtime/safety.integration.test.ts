/**
 * Safety of handlers and resources: subprocesses without a shell, with a time-out that ends the
 * whole process tree, an output limit and only the environment they are given; HTTP calls with a
 * time-out and a size limit; files that cannot leave the definition folder; bearer tokens.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createRuntime } from '../../src/runtime/server/server.js';
import {
  FIXTURES,
  closeServer,
  connect,
  firstText,
  listen,
  makeTempDir,
  serveDefinition,
  startBackend,
  type Served,
} from '../support/runtime.js';
import { eventually } from '../support/wait.js';

const KITCHEN = join(FIXTURES, 'kitchen', 'server.yaml');

let backend: Awaited<ReturnType<typeof startBackend>>;
let served: Served;
let scratch: Awaited<ReturnType<typeof makeTempDir>>;

beforeAll(async () => {
  backend = await startBackend();
  scratch = await makeTempDir();
  served = await serveDefinition(KITCHEN, {
    env: {
      BACKEND_URL: backend.url,
      API_KEY: 'k-1234',
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: '/home/leak',
      SECRET_OF_RUNTIME: 'leak',
    },
  });
});

afterAll(async () => {
  await served?.[Symbol.asyncDispose]();
  await backend?.[Symbol.asyncDispose]();
  await scratch?.[Symbol.asyncDispose]();
});

/** Alive and not a zombie: a killed orphan may wait for a PID 1 that never reaps it. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return true;
  }
}

describe('exec handlers', () => {
  it('pass only PATH and the handler env, plus the tool and user', async () => {
    await using client = await connect(served.mcpUrl, { headers: { 'X-MCP-User-Id': 'alice' } });
    const result = await client.callTool({ name: 'env_report', arguments: { note: 'x' } });
    expect(result.structuredContent).toEqual({
      keys: ['GREETING', 'MCPCTL_TOOL', 'MCPCTL_USER_ID', 'PATH'],
      greeting: 'hello',
      user: 'alice',
      tool: 'env_report',
      stdin: '{"note":"x"}',
    });
  });

  it('never interpret arguments with a shell', async () => {
    await using client = await connect(served.mcpUrl);
    const marker = join(scratch.path, 'pwned');
    const text = `$(touch ${marker}); touch ${marker} && \`touch ${marker}\``;
    const result = await client.callTool({ name: 'echo_args', arguments: { text } });
    expect(JSON.parse(firstText(result))).toEqual({ text });
    expect(existsSync(marker)).toBe(false);
  });

  it('stop the whole process group at the time-out', async () => {
    await using client = await connect(served.mcpUrl);
    const pidFile = join(scratch.path, 'grandchild.pid');
    const result = await client.callTool({ name: 'hang', arguments: { pidFile } });
    expect(result.isError).toBe(true);
    expect(firstText(result)).toMatch(/did not finish within 3000 ms \(time-out\)/);
    const grandchild = Number(await readFile(pidFile, 'utf8'));
    // SIGKILL to the group is delivered at once; the kernel reaps a moment later
    await eventually(async () => expect(isAlive(grandchild)).toBe(false), 1_000);
  });

  it('module handlers: answer at the time-out', async () => {
    await using client = await connect(served.mcpUrl);
    const result = await client.callTool({ name: 'slow_module', arguments: { ms: 20000 } });
    expect(result.isError).toBe(true);
    expect(firstText(result)).toBe('Tool "slow_module" failed: wait() did not finish within 300 ms (time-out)');
  });

  it('stop a program past the output limit', async () => {
    await using client = await connect(served.mcpUrl);
    const result = await client.callTool({ name: 'flood', arguments: {} });
    expect(result.isError).toBe(true);
    expect(firstText(result)).toMatch(/wrote more than the limit of 1000 bytes/);
  });

  it('report a failing program with its exit code and stderr', async () => {
    await using client = await connect(served.mcpUrl);
    const result = await client.callTool({ name: 'crash', arguments: {} });
    expect(result.isError).toBe(true);
    expect(firstText(result)).toBe('Tool "crash" failed: node exited with code 3: disk full');
    expect(result._meta).toEqual({ 'mcpctl/failure': { kind: 'exit_code', exit_code: 3 } });
  });

  it('run an executable script of the bundle directly, in the definition folder', async () => {
    await using client = await connect(served.mcpUrl);
    const result = await client.callTool({ name: 'shell_script', arguments: {} });
    expect(result.isError).toBeFalsy();
    expect(firstText(result)).toBe('hello from sh in files\n');
  });
});

describe('http handlers', () => {
  it('give up at the time-out', async () => {
    await using client = await connect(served.mcpUrl);
    const result = await client.callTool({ name: 'slow_http', arguments: {} });
    expect(result.isError).toBe(true);
    expect(firstText(result)).toContain('no answer within 1000 ms (time-out)');
    expect(result._meta).toEqual({ 'mcpctl/failure': { kind: 'timeout' } });
  });

  it('refuse a response past the size limit', async () => {
    await using client = await connect(served.mcpUrl);
    const result = await client.callTool({ name: 'big_http', arguments: {} });
    expect(result.isError).toBe(true);
    expect(firstText(result)).toMatch(/larger than the limit of 1000 bytes/);
  });

  it('report an error status with the body and without the query string (and without the value of ${BACKEND_URL})', async () => {
    await using client = await connect(served.mcpUrl);
    const result = await client.callTool({ name: 'missing_http', arguments: {} });
    expect(result.isError).toBe(true);
    expect(firstText(result)).toBe(
      `Tool "missing_http" failed: GET [redacted]/nothing-here answered 404 Not Found: {"error":"no such thing"}`,
    );
    expect(result._meta).toEqual({ 'mcpctl/failure': { kind: 'http_status', status: 404 } });
  });

  it('report an unreachable server', async () => {
    const temp = await makeTempDir();
    try {
      const { server, url } = await listen(() => {});
      await closeServer(server);
      const runtime = await createRuntime(
        {
          name: 'down',
          template: 'basic',
          egress: { allow_private: true },
          tools: [
            {
              name: 'call',
              description: 'calls a closed port',
              inputSchema: { type: 'object' },
              handler: {
                type: 'http',
                method: 'GET',
                url: `${url}/x`,
                timeout_ms: 2000,
                max_bytes: 1000,
                result: 'text',
              },
            },
          ],
        },
        { dir: temp.path },
      );
      const live = await listen(runtime.handler);
      try {
        await using client = await connect(`${live.url}/mcp`);
        const result = await client.callTool({ name: 'call', arguments: {} });
        expect(result.isError).toBe(true);
        expect(firstText(result)).toMatch(/could not connect \(ECONNREFUSED\)/);
      } finally {
        await closeServer(live.server);
        await runtime.close();
      }
    } finally {
      await temp[Symbol.asyncDispose]();
    }
  });
});

describe('file resources', () => {
  it('refuse template values that climb out of the folder', async () => {
    await using client = await connect(served.mcpUrl);
    await expect(client.readResource({ uri: 'docs://guide.md' })).resolves.toBeDefined();
    await expect(client.readResource({ uri: 'docs://..' })).rejects.toThrow(/cannot be used in a file path/);
    await expect(client.readResource({ uri: 'docs://..%2F..%2Fdefinition.json' })).rejects.toThrow(
      /cannot be used in a file path/,
    );
    await using named = await connect(served.mcpUrl, { headers: { 'X-MCP-User-Id': '../notes/bob' } });
    await expect(named.readResource({ uri: 'notes://mine' })).rejects.toThrow(/cannot be used in a file path/);
  });

  it('refuse symbolic links that lead outside, and absolute paths, at start or per read', async () => {
    await using temp = await makeTempDir();
    const root = join(temp.path, 'def');
    await mkdir(join(root, 'data'), { recursive: true });
    await writeFile(join(temp.path, 'outside.txt'), 'outside');
    await writeFile(join(root, 'data', 'inside.txt'), 'inside');
    await symlink(join(temp.path, 'outside.txt'), join(root, 'data', 'link.txt'));
    await symlink(join(root, 'data', 'inside.txt'), join(root, 'data', 'good-link.txt'));
    const runtime = await createRuntime(
      {
        name: 'links',
        template: 'basic',
        resources: [
          {
            uri: 'data://{name}',
            name: 'data',
            description: 'files of data/',
            source: { type: 'file', path: 'data/{{params.name}}' },
          },
          {
            uri: 'abs://passwd',
            name: 'passwd',
            description: 'an absolute path',
            source: { type: 'file', path: '/etc/passwd' },
          },
        ],
      },
      { dir: root },
    );
    const live = await listen(runtime.handler);
    try {
      await using client = await connect(`${live.url}/mcp`);
      expect((await client.readResource({ uri: 'data://inside.txt' })).contents[0]).toMatchObject({ text: 'inside' });
      expect((await client.readResource({ uri: 'data://good-link.txt' })).contents[0]).toMatchObject({
        text: 'inside',
      });
      await expect(client.readResource({ uri: 'data://link.txt' })).rejects.toThrow(
        /outside the definition folder \(through a symbolic link\)/,
      );
      await expect(client.readResource({ uri: 'abs://passwd' })).rejects.toThrow(/is absolute/);
    } finally {
      await closeServer(live.server);
      await runtime.close();
    }
  });

  it('refuse an image path outside the folder at start-up', async () => {
    await using temp = await makeTempDir();
    const start = createRuntime(
      {
        name: 'bad-image',
        template: 'basic',
        tools: [
          {
            name: 'img',
            description: 'an image from outside',
            inputSchema: { type: 'object' },
            handler: { type: 'static', content: [{ type: 'image', mimeType: 'image/png', path: '../secret.png' }] },
          },
        ],
      },
      { dir: temp.path },
    );
    await expect(start).rejects.toMatchObject({
      problems: [expect.stringMatching(/tools\[0\]\.handler\.content\[0\]\.path: .*outside the definition folder/)],
    });
  });
});

describe('start-up', () => {
  it('names every missing ${VAR} at once', async () => {
    await using temp = await makeTempDir();
    const start = createRuntime(
      {
        name: 'needs-env',
        template: 'advanced',
        auth: { type: 'bearer', token: '${MCP_TOKEN}' },
        tools: [
          {
            name: 'call',
            description: 'calls an API',
            inputSchema: { type: 'object' },
            handler: {
              type: 'http',
              method: 'GET',
              url: '${API_URL}/x',
              headers: { authorization: 'Bearer ${API_KEY}' },
              timeout_ms: 1000,
              max_bytes: 1000,
              result: 'text',
            },
          },
        ],
      },
      { dir: temp.path, env: { API_URL: 'http://127.0.0.1:9' } },
    );
    await expect(start).rejects.toMatchObject({
      problems: [
        expect.stringContaining('MCP_TOKEN is not set (used by auth.token)'),
        expect.stringContaining('API_KEY is not set (used by tools[0].handler.headers.authorization)'),
      ],
    });
  });
});

describe('start-up checks', () => {
  it('name a missing exec folder, a missing module and a missing export', async () => {
    await using temp = await makeTempDir();
    await writeFile(join(temp.path, 'tools.mjs'), 'export function other() { return 1; }\n');
    const start = createRuntime(
      {
        name: 'broken',
        template: 'custom',
        tools: [
          {
            name: 'run',
            description: 'runs',
            inputSchema: { type: 'object' },
            handler: { type: 'exec', command: ['true'], cwd: 'nope', timeout_ms: 1000, max_bytes: 100, result: 'text' },
          },
          {
            name: 'gone',
            description: 'missing module',
            inputSchema: { type: 'object' },
            handler: { type: 'module', module: 'missing.mjs', timeout_ms: 1000 },
          },
          {
            name: 'calc',
            description: 'missing export',
            inputSchema: { type: 'object' },
            handler: { type: 'module', module: 'tools.mjs', timeout_ms: 1000 },
          },
        ],
      },
      { dir: temp.path },
    );
    await expect(start).rejects.toMatchObject({
      problems: [
        'tools[0].handler.cwd: no such file',
        'tools[1].handler: cannot load missing.mjs: no such file',
        'tools[2].handler: tools.mjs has no exported function "calc" (the tool name; set handler.export to use another)',
      ],
    });
  });
});

describe('bearer auth', () => {
  it('requires the token on /mcp but not on /health', async () => {
    await using temp = await makeTempDir();
    const runtime = await createRuntime(
      {
        name: 'private',
        template: 'advanced',
        auth: { type: 'bearer', token: '${MCP_TOKEN}' },
        tools: [
          {
            name: 'ping_tool',
            description: 'answers pong',
            inputSchema: { type: 'object' },
            handler: { type: 'static', content: [{ type: 'text', text: 'pong' }] },
          },
        ],
      },
      { dir: temp.path, env: { MCP_TOKEN: 'let-me-in-please' } },
    );
    const live = await listen(runtime.handler);
    try {
      const mcpUrl = `${live.url}/mcp`;
      await expect(connect(mcpUrl)).rejects.toThrow();
      const missing = await fetch(mcpUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(missing.status).toBe(401);
      expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(((await missing.json()) as { error: { message: string } }).error.message).toMatch(
        /send Authorization: Bearer/,
      );
      const wrong = await fetch(mcpUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer nope' },
        body: '{}',
      });
      expect(wrong.status).toBe(401);
      expect((await fetch(`${live.url}/health`)).status).toBe(200);

      await using client = await connect(mcpUrl, { headers: { Authorization: 'Bearer let-me-in-please' } });
      expect(firstText(await client.callTool({ name: 'ping_tool', arguments: {} }))).toBe('pong');
    } finally {
      await closeServer(live.server);
      await runtime.close();
    }
  });
});
