/**
 * Deployments of real bundles: the engine builds a definition, and its runtime (src/runtime, run
 * from dist/, so `npx tsc -p tsconfig.build.json` first) serves it behind the gateway. An MCP
 * client talks to the deployment URL with the official SDK.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../../src/api/client.js';
import type { BuildRequestInput } from '../../../src/api/contract.js';
import type { RunningEngine } from '../../../src/engine/engine.js';
import { createSandbox, type Sandbox } from '../../support/cli.js';
import { startRealEngine } from '../../support/engine.js';
import { waitFor, waitUntil } from '../../support/wait.js';
import { isProcessAlive } from '../../../src/engine/engine-lock.js';
import { BROKEN_TOOL, GREET_TOOL } from '../../support/servers.js';

const API_KEY = 'real-runtime-test-key-0123456789';

const DEFINITION: BuildRequestInput = {
  name: 'greeter',
  template: 'basic',
  tools: [GREET_TOOL, BROKEN_TOOL],
};

let sandbox: Sandbox;
let engine: RunningEngine | undefined;

async function start(port = 0): Promise<RunningEngine> {
  engine = await startRealEngine(sandbox.env.MCPCTL_HOME!, { apiKey: API_KEY, port });
  return engine;
}

async function connect(mcpUrl: string): Promise<Client> {
  const client = new Client({ name: 'deployment-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl)));
  return client;
}

/** Waits (bounded) until the process has exited and been reaped. */
async function waitGone(pid: number): Promise<void> {
  await waitUntil(`process ${pid} to be gone`, () => !isProcessAlive(pid), 5_000);
}

function text(result: { content?: unknown }): string | undefined {
  return (result.content as Array<{ text?: string }> | undefined)?.[0]?.text;
}

/** The socket files in the engine's `run` folder. */
/** The instances' sockets: in the engine's run folder, or each in its sandbox slot's own folder. */
function socketFiles(home: string): string[] {
  const inFolder = (dir: string) => {
    try {
      return readdirSync(dir)
        .filter((name) => name.endsWith('.sock'))
        .map((name) => join(dir, name));
    } catch {
      return [];
    }
  };
  let slots: string[] = [];
  try {
    slots = readdirSync(join(home, 'sandboxes'));
  } catch {
    // no sandbox here
  }
  return [...inFolder(join(home, 'run')), ...slots.flatMap((slot) => inFolder(join(home, 'sandboxes', slot, 'sock')))];
}

/** How many connections are open on the Unix socket at `path` (Linux: an accepted connection carries its listener's path). */
function connectionsOn(path: string): number {
  return readFileSync('/proc/net/unix', 'utf8')
    .split('\n')
    .filter((line) => line.endsWith(` ${path}`) && line.trim().split(/\s+/)[5] === '03').length;
}

beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(async () => {
  await engine?.close(1000);
  engine = undefined;
  await sandbox.cleanup();
});

describe('deployments of real bundles', () => {
  it('serves a built server in production behind the gateway, replaces a killed instance, and comes back after an engine restart', async () => {
    let running = await start();
    const api = new ApiClient({ baseUrl: running.url, apiKey: API_KEY });
    const server = await api.build(DEFINITION);
    const { deployment } = await api.deploy({ mcp_id: server.mcp_id, environment: 'production' });
    expect(deployment).toMatchObject({
      status: 'deployed',
      url: `${running.url}/d/${deployment.deployment_id}`,
      desired_instances: 2,
    });

    const health = await fetch(deployment.health_check);
    expect(await health.json()).toMatchObject({ status: 'healthy', instances: { total: 2, healthy: 2 } });

    const mcp = await connect(`${deployment.url}/mcp`);
    expect((await mcp.listTools()).tools.map((t) => t.name).sort()).toEqual(['broken', 'greet']);
    expect(text(await mcp.callTool({ name: 'greet', arguments: { name: 'Ada' } }))).toBe('Hello Ada');
    expect((await mcp.callTool({ name: 'broken', arguments: {} })).isError).toBe(true);
    await mcp.close();

    const metrics = await api.metrics(deployment.deployment_id, 60);
    expect(metrics).toMatchObject({
      tool_calls: 2,
      tool_errors: 1,
      per_tool: { greet: { calls: 1, errors: 0 }, broken: { calls: 1, errors: 1 } },
    });

    // SIGKILL one instance: the other serves, and the supervisor brings it back.
    const victim = deployment.instances![0]!;
    process.kill(victim.pid!, 'SIGKILL');
    await waitGone(victim.pid!);
    for (let i = 0; i < 5; i += 1) {
      const again = await connect(`${deployment.url}/mcp`);
      expect(text(await again.callTool({ name: 'greet', arguments: { name: `n${i}` } }))).toBe(`Hello n${i}`);
      await again.close();
    }
    let healed = deployment;
    for (let i = 0; i < 100; i += 1) {
      const answer = await api.status(deployment.deployment_id, { waitSeconds: 1 });
      healed = answer.deployment ?? healed;
      const replaced = healed.instances!.find((x) => x.id === victim.id);
      if (replaced?.state === 'healthy' && replaced.pid !== victim.pid) break;
    }
    expect(healed.instances!.filter((x) => x.state === 'healthy')).toHaveLength(2);

    // Engine restart on the same port: the deployment is back at the same URL.
    const port = running.port;
    await api.close();
    await running.close(1000);
    running = await start(port);
    const after = new ApiClient({ baseUrl: running.url, apiKey: API_KEY });
    const restored = (await after.status(deployment.deployment_id)).deployment!;
    expect(restored).toMatchObject({ status: 'deployed', url: deployment.url });
    const back = await connect(`${deployment.url}/mcp`);
    expect(text(await back.callTool({ name: 'greet', arguments: { name: 'again' } }))).toBe('Hello again');
    await back.close();
    await after.close();
  });

  it('reaches its process instances over their Unix sockets in the engine’s home, and the sockets go with the instances', async () => {
    const home = sandbox.env.MCPCTL_HOME!;
    const running = await start();
    const api = new ApiClient({ baseUrl: running.url, apiKey: API_KEY });
    const server = await api.build(DEFINITION);
    const { deployment } = await api.deploy({ mcp_id: server.mcp_id, environment: 'production' });
    expect(deployment.status).toBe('deployed');
    const sockets = socketFiles(home);
    expect(sockets).toHaveLength(2);
    expect(statSync(join(home, 'run')).mode & 0o777).toBe(0o700);

    const mcp = await connect(`${deployment.url}/mcp`);
    for (let i = 0; i < 4; i += 1)
      expect(text(await mcp.callTool({ name: 'greet', arguments: { name: `n${i}` } }))).toBe(`Hello n${i}`);
    // the gateway's kept-alive connections to the instances are on their sockets
    expect(sockets.map(connectionsOn).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);

    // A killed instance: the gateway's requests go to the other one, and its socket file is removed.
    const victim = deployment.instances![0]!;
    process.kill(victim.pid!, 'SIGKILL');
    await waitGone(victim.pid!);
    // once the engine has seen it go (on a loaded machine the exit reaches it a moment later: a call
    // sent on a kept-alive connection before that cannot be repeated, tools/call not being idempotent)
    await waitFor('the engine to see the killed instance go', async () => {
      const now = await api.status(deployment.deployment_id);
      const seen = now.deployment?.instances?.find((instance) => instance.id === victim.id);
      return seen === undefined || seen.pid !== victim.pid || seen.state !== 'healthy' ? true : undefined;
    });
    for (let i = 0; i < 4; i += 1)
      expect(text(await mcp.callTool({ name: 'greet', arguments: { name: `k${i}` } }))).toBe(`Hello k${i}`);
    await mcp.close();
    await waitFor('the killed instance’s socket to be removed', () =>
      sockets.filter((path) => existsSync(path)).length === 1 ? true : undefined,
    );

    await api.stop(deployment.deployment_id);
    await waitFor('every socket to be removed', () => (socketFiles(home).length === 0 ? true : undefined));
    await api.close();
  });
});
