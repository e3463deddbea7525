/**
 * Secrets stay secret: every value of a deployment's env_vars (whatever its variable is called)
 * is hidden from every log line at every level (the development gateway's debug lines of
 * arguments and results, the instance's own lines, the engine's log), from the deployment's
 * status, and from the error text a tool call returns to its client, even when an `exec`
 * program prints it on stderr. Only the store (mode 0600) keeps it. Real runtime, from dist/.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../../src/api/client.js';
import type { BuildRequestInput } from '../../../src/api/contract.js';
import type { RunningEngine } from '../../../src/engine/engine.js';
import { createLogger } from '../../../src/engine/engine-log.js';
import { createSandbox, type Sandbox } from '../../support/cli.js';
import { requireBuilt, waitFor } from '../../support/app.js';
import { startRealEngine } from '../../support/engine.js';

beforeAll(() => requireBuilt());

const API_KEY = 'secrets-test-key-0123456789abcdef';
const TOKEN = 'tok-8c1f2e9a7b6d5c4e';
/** a value of a variable whose name says nothing about secrets */
const NOTE = 'note-5a4b3c2d1e0f';

/** An exec tool that prints both values on stderr and fails; its caller also sends the token. */
const DEFINITION: BuildRequestInput = {
  name: 'leaky',
  template: 'basic',
  tools: [
    {
      name: 'leak',
      description: 'Prints its environment on stderr and fails',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
      handler: {
        type: 'exec',
        command: [
          process.execPath,
          '-e',
          'process.stderr.write(`token ${process.env.SECRET_TOKEN} note ${process.env.PLAIN_NOTE}`); process.exit(2)',
        ],
        env: { SECRET_TOKEN: '${SECRET_TOKEN}', PLAIN_NOTE: '${PLAIN_NOTE}' },
      },
    },
    {
      name: 'echo',
      description: 'Answers with its text',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
      handler: { type: 'static', content: [{ type: 'text', text: 'got {{args.text}}' }] },
    },
  ],
};

/** A module that refuses to load with the token in its message (the build's check has no token). */
const FAILS_AT_START: BuildRequestInput = {
  name: 'refuses',
  template: 'custom',
  tools: [
    {
      name: 'x',
      description: 'x',
      inputSchema: { type: 'object' },
      handler: { type: 'module', module: 'tool.mjs', export: 'x' },
    },
  ],
  files: {
    'tool.mjs': {
      encoding: 'utf8',
      content:
        "if (process.env.SECRET_TOKEN !== undefined) throw new Error('cannot start with ' + process.env.SECRET_TOKEN);\nexport const x = () => 'x';\n",
    },
  },
};

/** An exec tool that writes its text argument on stderr and fails: it prints whatever it is given. */
const PRINTER: BuildRequestInput = {
  name: 'printer',
  template: 'basic',
  tools: [
    {
      name: 'print',
      description: 'Writes its text on stderr and fails',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
      handler: {
        type: 'exec',
        command: [
          process.execPath,
          '-e',
          "let t='';process.stdin.on('data',c=>t+=c).on('end',()=>{process.stderr.write('printed '+JSON.parse(t).text);process.exit(2)})",
        ],
      },
    },
  ],
};

let sandbox: Sandbox;
let engine: RunningEngine | undefined;
const engineLog: string[] = [];

beforeEach(async () => {
  sandbox = await createSandbox();
  engineLog.length = 0;
  engine = await startRealEngine(sandbox.env.MCPCTL_HOME!, {
    apiKey: API_KEY,
    logger: createLogger({ write: (line) => engineLog.push(line), level: 'debug' }),
  });
});
afterEach(async () => {
  await engine?.close(1000);
  engine = undefined;
  await sandbox.cleanup();
});

/** Every file under the home holding `value`, with its mode. */
async function filesHolding(home: string, value: string): Promise<Array<{ file: string; mode: number }>> {
  const found: Array<{ file: string; mode: number }> = [];
  const visit = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await visit(path);
      else if (entry.isFile() && (await readFile(path)).includes(value))
        found.push({ file: relative(home, path), mode: (await stat(path)).mode & 0o777 });
    }
  };
  await visit(home);
  return found;
}

describe('secrets of a deployment', () => {
  it('are hidden from every log line, from the error a tool call returns, and from every file but the 0600 store', async () => {
    const api = new ApiClient({ baseUrl: engine!.url, apiKey: API_KEY });
    const server = await api.build(DEFINITION);
    const { deployment } = await api.deploy({
      mcp_id: server.mcp_id,
      environment: 'development',
      config: { env_vars: { SECRET_TOKEN: TOKEN, PLAIN_NOTE: NOTE } },
    });
    expect(deployment.status).toBe('deployed');

    const client = new Client({ name: 'secrets-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${deployment.url}/mcp`)));
    const failed = await client.callTool({ name: 'leak', arguments: { text: `my token is ${TOKEN}` } });
    const shown = JSON.stringify(failed);
    expect(failed.isError).toBe(true);
    expect(shown).toContain('[redacted]');
    expect(shown).not.toContain(TOKEN);
    expect(shown).not.toContain(NOTE);
    // development logs arguments and results at debug level: those too
    expect(
      JSON.stringify(await client.callTool({ name: 'echo', arguments: { text: `${TOKEN} and ${NOTE}` } })),
    ).toContain(TOKEN);
    await client.close();

    const id = deployment.deployment_id;
    const lines = await waitFor('the calls in the log', async () => {
      const found = await engine!.deployments!.logs(id, { limit: 5000 });
      return found.filter((line) => line.message.includes('leak')).length >= 2 &&
        found.some((line) => line.message.includes('← 200'))
        ? found
        : undefined;
    });
    expect(lines.some((line) => line.level === 'debug')).toBe(true);
    const text = JSON.stringify(lines);
    expect(text).toContain('[redacted]');
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(NOTE);
    expect(engineLog.join('')).not.toContain(TOKEN);
    expect(engineLog.join('')).not.toContain(NOTE);
    expect(JSON.stringify((await api.status(id)).deployment)).not.toContain(TOKEN);

    await engine!.close(1000);
    engine = undefined;
    for (const value of [TOKEN, NOTE]) {
      const holders = await filesHolding(sandbox.env.MCPCTL_HOME!, value);
      expect(holders.map((h) => h.file.split('/').slice(0, 2).join('/'))).toEqual(['store/deployments']);
      expect(holders.every((h) => h.mode === 0o600)).toBe(true);
    }
    await api.close();
  });

  it('are hidden from the reason of a deployment whose server refused to start with one in its message', async () => {
    const api = new ApiClient({ baseUrl: engine!.url, apiKey: API_KEY });
    const server = await api.build(FAILS_AT_START);
    const answer = await api.deploy({
      mcp_id: server.mcp_id,
      environment: 'staging',
      config: { env_vars: { SECRET_TOKEN: TOKEN } },
    });
    expect(answer.deployment.status).toBe('failed');
    expect(answer.deployment.reason).toContain('cannot start with [redacted]');
    expect(JSON.stringify(answer)).not.toContain(TOKEN);
    const lines = await engine!.deployments!.logs(answer.deployment.deployment_id, { limit: 5000 });
    expect(JSON.stringify(lines)).not.toContain(TOKEN);
    expect(engineLog.join('')).not.toContain(TOKEN);
    await api.close();
  });

  it("of one deployment, and the engine's API key, are hidden from another deployment's log that prints them", async () => {
    const api = new ApiClient({ baseUrl: engine!.url, apiKey: API_KEY });
    const holder = await api.build(DEFINITION);
    const a = await api.deploy({
      mcp_id: holder.mcp_id,
      environment: 'staging',
      config: { env_vars: { SECRET_TOKEN: TOKEN, PLAIN_NOTE: NOTE } },
    });
    expect(a.deployment.status).toBe('deployed');
    const printer = await api.build(PRINTER);
    const b = await api.deploy({ mcp_id: printer.mcp_id, environment: 'development' });
    expect(b.deployment.status).toBe('deployed');

    // B knows nothing of A's values or of the key: it is handed them, as a server that read them would print them
    const client = new Client({ name: 'secrets-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${b.deployment.url}/mcp`)));
    const failed = await client.callTool({ name: 'print', arguments: { text: `${TOKEN} ${NOTE} ${API_KEY}` } });
    expect(failed.isError).toBe(true);
    await client.close();

    const id = b.deployment.deployment_id;
    const lines = await waitFor('the printed line in the log', async () => {
      const found = await engine!.deployments!.logs(id, { limit: 5000 });
      return found.some((line) => line.message.includes('printed')) ? found : undefined;
    });
    const text = JSON.stringify(lines);
    expect(text).toContain('printed [redacted] [redacted] [redacted]');
    for (const value of [TOKEN, NOTE, API_KEY]) {
      expect(text).not.toContain(value);
      expect(engineLog.join('')).not.toContain(value);
    }
    await api.close();
  });
});
