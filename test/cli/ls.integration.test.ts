import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../src/api/contract.js';
import { runCli } from '../support/cli.js';
import { startTestEngine, type TestEngine } from '../support/engine.js';

let t: TestEngine;
let prod: Deployment;
let dev: Deployment;
let stopped: Deployment;
let weatherId: string;

const ls = (...args: string[]) => runCli(['ls', ...args], { env: t.env, cwd: t.sandbox.dir });

beforeAll(async () => {
  t = await startTestEngine();
  const empty = await ls();
  expect(empty.code).toBe(0);
  expect(empty.stdout).toContain('No servers yet.');
  expect(empty.stdout).toContain('No deployments yet.');
  expect(empty.stdout).toContain('→ deploy a server: mcpctl deploy');

  const weather = await t.addServer('weather');
  const notes = await t.addServer('notes');
  weatherId = weather.server.mcp_id;
  prod = await t.deploy(weather, 'production');
  dev = await t.deploy(notes, 'development');
  stopped = await t.deploy(await t.addServer('old'), 'staging');
  await t.client.stop(stopped.deployment_id);
});
afterAll(async () => {
  await t.close();
});

describe('mcpctl ls', () => {
  it('shows servers and deployments as tables, newest first', async () => {
    const result = await ls();
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toMatch(/^SERVER\s+NAME\s+VERSION\s+TOOLS\s+RESOURCES\s+PROMPTS\s+BUILT$/);
    expect(result.stdout).toMatch(new RegExp(`${weatherId}\\s+weather`));
    const header = lines.findIndex((line) => line.startsWith('NAME '));
    expect(lines[header]).toMatch(/^NAME\s+DEPLOYMENT\s+STATUS\s+INST\s+UPDATED\s+MCP URL$/);
    const rows = lines.slice(header + 1).filter((line) => line !== '' && !line.startsWith('MCP URLs'));
    expect(rows.map((row) => row.split(/\s+/)[1])).toEqual([
      stopped.deployment_id,
      dev.deployment_id,
      prod.deployment_id,
    ]);
    // the stable URL's path reaches whichever deployment of weather in production is current; the
    // engine's address is said once, below the table
    expect(rows[2]).toMatch(
      new RegExp(
        `^weather\\.production\\s+${prod.deployment_id}\\s+deployed\\s+2/2\\s+\\d+ s ago\\s+/d/weather\\.production/mcp$`,
      ),
    );
    expect(result.stdout).toContain(`MCP URLs are on ${t.engine.url}\n`);
    // a stopped deployment has no URL that reaches it
    expect(rows[0]).toMatch(/^old\.staging\s+deploy_\w+\s+stopped\s+\d+ s ago$/);
  });

  it('fits 100 columns', async () => {
    const result = await runCli(['ls'], { env: { ...t.env, COLUMNS: '100' }, cwd: t.sandbox.dir });
    expect(result.code).toBe(0);
    for (const line of result.stdout.split('\n')) expect(line.length, line).toBeLessThanOrEqual(100);
  });

  it('filters by environment, status and server (name or id)', async () => {
    const byEnv = await ls('--env', 'production', '--json');
    expect(byEnv.json().deployments.map((d: Deployment) => d.deployment_id)).toEqual([prod.deployment_id]);
    const port = new URL(t.engine.url).port;
    expect(byEnv.json().deployments[0].stable_urls).toEqual([
      `http://weather.production.localhost:${port}/mcp`,
      `http://127.0.0.1:${port}/d/weather.production/mcp`,
    ]);
    // a deployment filter asks for the deployments alone
    expect(byEnv.json().servers).toBeUndefined();
    expect((await ls('--status', 'deployed')).stdout).not.toMatch(/^SERVER/m);
    const byStatus = await ls('--status', 'stopped', '--deployments', '--json');
    expect(byStatus.json()).toEqual({
      deployments: [expect.objectContaining({ deployment_id: stopped.deployment_id, status: 'stopped' })],
    });
    const byName = await ls('--server', 'notes', '--json');
    expect(byName.json().servers.map((s: { name: string }) => s.name)).toEqual(['notes']);
    expect(byName.json().deployments.map((d: Deployment) => d.deployment_id)).toEqual([dev.deployment_id]);
    const byId = await ls('--server', weatherId, '--json');
    expect(byId.json().deployments.map((d: Deployment) => d.deployment_id)).toEqual([prod.deployment_id]);
    const none = await ls('--server', 'nothing-here');
    expect(none.stdout).toContain('No server matches.');
    expect(none.stdout).toContain('No deployment matches.');
  });

  it('--servers shows only servers; --quiet the ids of the rows shown', async () => {
    const servers = await ls('--servers', '--json');
    expect(Object.keys(servers.json())).toEqual(['servers']);
    expect(servers.json().servers).toHaveLength(3);
    const quiet = await ls('--quiet', '--status', 'deployed');
    expect(quiet.stdout.trim().split('\n').sort()).toEqual([dev.deployment_id, prod.deployment_id].sort());
    const quietServers = await ls('--quiet', '--servers');
    expect(quietServers.stdout.trim().split('\n').sort()).toEqual(
      servers
        .json()
        .servers.map((s: { mcp_id: string }) => s.mcp_id)
        .sort(),
    );
  });

  it('refuses contradictory or unknown filters with exit 2', async () => {
    const both = await ls('--servers', '--deployments');
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--servers and --deployments');
    const badStatus = await ls('--status', 'running');
    expect(badStatus.code).toBe(2);
    expect(badStatus.stderr).toMatch(/running.*invalid|Allowed choices/i);
  });
});
