/**
 * The warm pool with the real runtime (run from dist/: `npm run build` first): a deployment's
 * instance, a build's check and a test's instance each take a process that was loaded and waiting;
 * the pool refills; a process serves one bundle only; the instance's environment is only its
 * deployment's; a killed waiting process is replaced; pool 0 starts cold; and nothing outlives the
 * engine's stop. Leftover waiting processes of a killed engine are found by their labels.
 */
import { execFileSync } from 'node:child_process';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.js';
import type { BuildRequestInput } from '../../src/api/contract.js';
import type { RunningEngine } from '../../src/engine/engine.js';
import { createProcessRunner, LABELS_ENV } from '../../src/engine/runners/process/process-runner.js';
import { WARM_DEPLOYMENT_LABEL } from '../../src/engine/runners/process/warm-pool.js';
import { isProcessAlive } from '../../src/engine/engine-lock.js';
import { createSandbox, type Sandbox } from '../support/cli.js';
import { startRealEngine } from '../support/engine.js';
import { eventually, waitFor } from '../support/wait.js';

const API_KEY = 'warm-pool-test-key-0123456789abcdef';

/** A tool that answers with the names of its process's environment variables and one value. */
const ENV_SERVER: BuildRequestInput = {
  name: 'envreader',
  template: 'custom',
  tools: [
    {
      name: 'env',
      description: 'Shows the environment',
      inputSchema: { type: 'object' },
      handler: { type: 'module', module: 'env.mjs', export: 'env' },
    },
  ],
  files: {
    'env.mjs': {
      encoding: 'utf8',
      content:
        'export const env = () => JSON.stringify({ names: Object.keys(process.env).sort(), token: process.env.APP_TOKEN ?? null });\n',
    },
  },
};

function greeter(name: string): BuildRequestInput {
  return {
    name,
    template: 'basic',
    tools: [
      {
        name: 'greet',
        description: 'Greets someone by name',
        inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        handler: { type: 'static', content: [{ type: 'text', text: 'Hello {{args.name}}' }] },
      },
    ],
  };
}

let sandbox: Sandbox;
let engine: RunningEngine | undefined;
let api: ApiClient | undefined;
const strays: number[] = [];

async function start(warmPool?: number): Promise<{ engine: RunningEngine; api: ApiClient }> {
  engine = await startRealEngine(sandbox.env.MCPCTL_HOME!, {
    apiKey: API_KEY,
    ...(warmPool === undefined ? {} : { warmPool }),
  });
  api = new ApiClient({ baseUrl: engine.url, apiKey: API_KEY });
  return { engine, api };
}

/** Waits until the pool holds `size` loaded processes, and gives their pids. */
async function readyPids(running: RunningEngine): Promise<number[]> {
  return waitFor('a full pool', () => {
    const { size, ready } = running.warmPool.stats();
    return ready === size ? running.warmPool.pids() : undefined;
  });
}

function text(result: { content?: unknown }): string {
  return (result.content as Array<{ text?: string }> | undefined)?.[0]?.text ?? '';
}

async function health(running: RunningEngine): Promise<Record<string, unknown>> {
  const response = await fetch(`${running.url}/v1/health`, { headers: { authorization: `Bearer ${API_KEY}` } });
  return ((await response.json()) as { data: Record<string, unknown> }).data;
}

beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(async () => {
  await api?.close();
  api = undefined;
  await engine?.close(1000);
  engine = undefined;
  for (const pid of strays.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await sandbox.cleanup();
});

describe('the warm pool', () => {
  it('gives a development deployment a process that was waiting, refills, and never serves a second bundle with it', async () => {
    const { engine: running, api: client } = await start(2);
    const server = await client.build(greeter('warmdev'));
    const before = await readyPids(running);
    expect(before).toHaveLength(2);
    expect((await health(running)).warm_pool).toEqual({ size: 2, ready: 2, warming: 0 });

    const first = (await client.deploy({ mcp_id: server.mcp_id, environment: 'development' })).deployment;
    expect(first.status).toBe('deployed');
    const taken = first.instances?.[0]?.pid;
    expect(before).toContain(taken);

    // the pool refills without the taken process, which never comes back to it
    const after = await readyPids(running);
    expect(after).toHaveLength(2);
    expect(after).not.toContain(taken);

    const mcp = new Client({ name: 'warm-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${first.url}/mcp`)));
    expect(text(await mcp.callTool({ name: 'greet', arguments: { name: 'Ada' } }))).toBe('Hello Ada');
    await mcp.close();

    // a new deployment of the same server replaces the first: another process; the first ends with its deployment
    const second = (await client.deploy({ mcp_id: server.mcp_id, environment: 'development' })).deployment;
    expect(second.status).toBe('deployed');
    const next = second.instances?.[0]?.pid;
    expect(next).not.toBe(taken);
    expect(after).toContain(next);
    await eventually(async () => expect(isProcessAlive(taken!)).toBe(false));
    expect(running.warmPool.pids()).not.toContain(taken);
  });

  it('serves the instance with its deployment’s environment only', async () => {
    const { engine: running, api: client } = await start(1);
    const server = await client.build(ENV_SERVER);
    const before = await readyPids(running);
    const { deployment } = await client.deploy({
      mcp_id: server.mcp_id,
      environment: 'development',
      config: { env_vars: { APP_TOKEN: 'tok-123' } },
    });
    expect(deployment.status).toBe('deployed');
    expect(before).toContain(deployment.instances?.[0]?.pid);

    const mcp = new Client({ name: 'warm-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${deployment.url}/mcp`)));
    const seen = JSON.parse(text(await mcp.callTool({ name: 'env', arguments: {} }))) as {
      names: string[];
      token: string | null;
    };
    await mcp.close();
    // what a cold start gives: PATH, the deployment's env_vars and its labels; nothing of the engine's or of the waiting process's
    expect(seen.names).toEqual(['APP_TOKEN', LABELS_ENV, 'PATH'].sort());
    expect(seen.token).toBe('tok-123');
  });

  it('gives the check of a build and the instance of a test run a waiting process each', async () => {
    const { engine: running, api: client } = await start(1);
    const [forBuild] = await readyPids(running);
    await client.build(greeter('warmbuild'));
    // the check's process served the build and ended with it
    await eventually(async () => expect(isProcessAlive(forBuild!)).toBe(false));

    const server = await client.build(greeter('warmtest'));
    const [forTest] = await readyPids(running);
    const result = await client.test({ mcp_id: server.mcp_id, message: 'greet Ada', ai_model: 'mcpctl-local' });
    expect(result.tools_used).toEqual(['greet']);
    await eventually(async () => expect(isProcessAlive(forTest!)).toBe(false));
  });

  it('replaces a waiting process that was killed', async () => {
    const { engine: running } = await start(1);
    const [victim] = await readyPids(running);
    process.kill(victim!, 'SIGKILL');
    const replaced = await waitFor('a replacement', () => {
      const pids = running.warmPool.pids();
      return running.warmPool.stats().ready === 1 && !pids.includes(victim!) ? pids : undefined;
    });
    expect(replaced).toHaveLength(1);
  });

  it('starts cold when its size is 0, and when the environment holds what only a new process honours', async () => {
    const { engine: running, api: client } = await start(0);
    expect(running.warmPool.pids()).toEqual([]);
    expect((await health(running)).warm_pool).toEqual({ size: 0, ready: 0, warming: 0 });
    const server = await client.build(greeter('coldone'));
    const { deployment } = await client.deploy({ mcp_id: server.mcp_id, environment: 'development' });
    expect(deployment.status).toBe('deployed');
    expect(running.warmPool.pids()).toEqual([]);
    await engine!.close(1000);
    engine = undefined;

    const warm = await start(1);
    const [waiting] = await readyPids(warm.engine);
    const flagged = await warm.api.deploy({
      mcp_id: server.mcp_id,
      environment: 'development',
      config: { env_vars: { NODE_OPTIONS: '--max-old-space-size=128' } },
    });
    expect(flagged.deployment.status).toBe('deployed');
    expect(flagged.deployment.instances?.[0]?.pid).not.toBe(waiting);
    expect(warm.engine.warmPool.pids()).toEqual([waiting]);
  });

  it('leaves no process behind when the engine stops', async () => {
    const { engine: running, api: client } = await start(2);
    const server = await client.build(greeter('stopall'));
    const { deployment } = await client.deploy({ mcp_id: server.mcp_id, environment: 'staging' });
    const pids = [...(await readyPids(running)), ...(deployment.instances ?? []).map((instance) => instance.pid!)];
    expect(pids).toHaveLength(3);
    await running.close(1000);
    engine = undefined;
    for (const pid of pids) expect(isProcessAlive(pid)).toBe(false);
  });

  it('are found by the labels of their engine after it was killed, and stopped', async () => {
    const home = sandbox.env.MCPCTL_HOME!;
    // a waiting process whose engine is gone: its parent has exited
    const labels = JSON.stringify({ engine: home, deployment: WARM_DEPLOYMENT_LABEL, instance: 'warm-1' });
    const script = `const { spawn } = require('node:child_process');
      const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore', env: { PATH: process.env.PATH, ${LABELS_ENV}: ${JSON.stringify(labels)} } });
      child.unref();
      process.stdout.write(String(child.pid));`;
    const left = Number(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }));
    strays.push(left);
    const found = await createProcessRunner(() => Promise.reject(new Error('not used'))).find(home);
    expect(found.map((item) => item.pid)).toContain(left);

    await start(1);
    await eventually(async () => expect(isProcessAlive(left)).toBe(false));
  });
});
