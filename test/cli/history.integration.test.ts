/**
 * The metrics history and usage across an engine restart, with real parts: a real engine builds and
 * deploys a definition (its runtime from dist/, so `npm run build` first), two MCP clients of the
 * official SDK with different clientInfo call its tools, the engine stops, a new engine starts on
 * the same home, and `mcpctl metrics --since 1h` and `mcpctl usage` still count the calls.
 * Without sessions (the default), a request counts for the client last named on its connection.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.js';
import type { BuildRequestInput } from '../../src/api/contract.js';
import type { MetricsHistory, Usage } from '../../src/api/usage.js';
import type { RunningEngine } from '../../src/engine/engine.js';
import { createSandbox, runCli, type Sandbox } from '../support/cli.js';
import { startRealEngine } from '../support/engine.js';
import { BROKEN_TOOL, GREET_TOOL } from '../support/servers.js';

const API_KEY = 'history-test-key-0123456789abcdef';

/** With sessions, each request counts for the client whose `initialize` opened its session. */
const DEFINITION: BuildRequestInput = {
  name: 'greeter',
  template: 'basic',
  sessions: true,
  tools: [GREET_TOOL, BROKEN_TOOL],
};

let sandbox: Sandbox | undefined;
let engine: RunningEngine | undefined;
const apis: ApiClient[] = [];
afterEach(async () => {
  for (const api of apis.splice(0)) await api.close();
  await engine?.close(1000);
  engine = undefined;
  await sandbox?.cleanup();
  sandbox = undefined;
});

async function start(home: string): Promise<{ engine: RunningEngine; api: ApiClient }> {
  engine = await startRealEngine(home, { apiKey: API_KEY });
  const api = new ApiClient({ baseUrl: engine.url, apiKey: API_KEY });
  apis.push(api);
  return { engine, api };
}

async function connect(url: string, name: string, version: string): Promise<Client> {
  const client = new Client({ name, version });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

describe('history and usage across an engine restart', () => {
  it('metrics --since 1h and usage still show the calls made before the restart', async () => {
    sandbox = await createSandbox();
    const home = sandbox.env.MCPCTL_HOME!;
    const first = await start(home);
    const server = await first.api.build(DEFINITION);
    const { deployment } = await first.api.deploy({ mcp_id: server.mcp_id, environment: 'production' });
    const id = deployment.deployment_id;

    const alpha = await connect(`${deployment.url}/mcp`, 'alpha-client', '1.0.0');
    for (const name of ['Ada', 'Grace', 'Linus']) await alpha.callTool({ name: 'greet', arguments: { name } });
    const beta = await connect(`${deployment.url}/mcp`, 'beta-client', '2.1');
    await beta.callTool({ name: 'greet', arguments: { name: 'Alan' } });
    expect((await beta.callTool({ name: 'broken', arguments: {} })).isError).toBe(true);
    await alpha.close();
    await beta.close();

    await first.engine.close(1000);
    engine = undefined;
    const second = await start(home);
    const env = { ...sandbox.env, MCPCTL_API_URL: second.engine.url, MCPCTL_API_KEY: API_KEY };
    const cli = (...args: string[]) => runCli(args, { env, cwd: sandbox!.dir });

    const metrics = await cli('metrics', id, '--since', '1h', '--json');
    expect(metrics.code, metrics.stderr).toBe(0);
    const history = metrics.json<MetricsHistory>();
    expect(history).toMatchObject({ deployment_id: id, resolution_seconds: 60, step_seconds: 60 });
    expect(history.totals).toMatchObject({ tool_calls: 5, tool_errors: 1, tool_error_rate: 0.2 });
    // two initializes, their `initialized` notifications, the five calls, and what the SDK sends besides
    expect(history.totals.requests).toBeGreaterThanOrEqual(9);
    expect(history.totals.latency_ms.p95).not.toBeNull();
    // the one failed call is the only error: the clients closing their event streams are not errors
    expect(history.totals.errors_by_type).toEqual({ tool_error: 1 });
    expect(history.points.reduce((sum, p) => sum + p.tool_calls, 0)).toBe(5);

    const usage = await cli('usage', id, '--json');
    expect(usage.code, usage.stderr).toBe(0);
    const u = usage.json<Usage>();
    expect(u.tools).toEqual([
      { name: 'greet', calls: 4, errors: 0 },
      { name: 'broken', calls: 1, errors: 1 },
    ]);
    const clients = Object.fromEntries(u.clients.map((c) => [`${c.name} ${c.version ?? ''}`, c.tool_calls]));
    expect(clients).toMatchObject({ 'alpha-client 1.0.0': 3, 'beta-client 2.1': 2 });
    // the deployment checks no credentials that name a user
    expect(u.users).toEqual([]);
    expect(u.days).toHaveLength(1);
    expect(u.days[0]).toMatchObject({ tool_calls: 5, tool_errors: 1 });
    // a DELETE ended each session: nothing else was counted for an unknown client
    expect(u.clients.map((c) => c.name).sort()).toEqual(['alpha-client', 'beta-client']);

    // for people: totals and charts, tables per tool, client, user and day
    const chart = await cli('metrics', id, '--since', '1h');
    expect(chart.code, chart.stderr).toBe(0);
    expect(chart.stdout).toContain(`${id}, last 1 h`);
    expect(chart.stdout).toMatch(/tool calls\s+5/);
    expect(chart.stdout).toMatch(/requests\s+\d+ ┤/);
    expect(chart.stdout).toMatch(/p95 latency ms\s+[\d.]+ ┤/);
    const table = await cli('usage', id);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/greet\s+4\s+0\s+0%/);
    expect(table.stdout).toMatch(/alpha-client\s+1\.0\.0\s+\d+\s+3/);
    expect(table.stdout).toMatch(/beta-client\s+2\.1\s+\d+\s+2/);
    expect(table.stdout).toMatch(/DAY\s+REQUESTS/);
  }, 120_000);

  it('without sessions: usage by initialize; a bad since is 400 naming the parameter, exit 2 in the CLI', async () => {
    sandbox = await createSandbox();
    const { engine: running, api } = await start(sandbox.env.MCPCTL_HOME!);
    const server = await api.build({ ...DEFINITION, sessions: false });
    const { deployment } = await api.deploy({ mcp_id: server.mcp_id, environment: 'development' });
    // without sessions: each client's `initialize` counts for it, whatever connection it came on
    for (const name of ['one-client', 'other-client']) {
      const mcp = await connect(`${deployment.url}/mcp`, name, '0.1');
      await mcp.callTool({ name: 'greet', arguments: { name } });
      await mcp.close();
    }
    const usage = await api.usage(deployment.deployment_id, '1d');
    expect(usage.tools).toEqual([{ name: 'greet', calls: 2, errors: 0 }]);
    for (const name of ['one-client', 'other-client'])
      expect(usage.clients.find((c) => c.name === name)?.requests).toBeGreaterThanOrEqual(1);
    const answer = await fetch(`${running.url}/v1/deploy/${deployment.deployment_id}/usage?since=31d`, {
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    expect(answer.status).toBe(400);
    expect(JSON.stringify(await answer.json())).toContain('query.since');
    const env = { ...sandbox.env, MCPCTL_API_URL: running.url, MCPCTL_API_KEY: API_KEY };
    const cli = await runCli(['metrics', deployment.deployment_id, '--since', '2w'], { env, cwd: sandbox.dir });
    expect(cli.code).toBe(2);
    expect(cli.stderr).toMatch(/--since/);
    const none = await runCli(['usage', 'deploy_0000000000000000'], { env, cwd: sandbox.dir });
    expect(none.code, none.stderr).not.toBe(0);
  }, 120_000);
});
