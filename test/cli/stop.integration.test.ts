import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { startTestEngine, type TestEngine } from '../support/engine.js';

let t: TestEngine;
beforeEach(async () => {
  t = await startTestEngine();
});
afterEach(async () => {
  await t.close();
});

const stop = (...args: string[]) => runCli(['stop', ...args], { env: t.env, cwd: t.sandbox.dir });

describe('mcpctl stop', () => {
  it('stops a deployed deployment; stopping it again is a success that says it already was', async () => {
    const d = await t.deploy(await t.addServer('weather'), 'production');
    const result = await stop(d.deployment_id);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`✔ Stopped ${d.deployment_id}`);
    expect(result.stdout).toMatch(/status\s+stopped/);
    expect(result.stdout).toMatch(/reason\s+stopped on request/);
    expect((await t.client.status(d.deployment_id)).deployment?.status).toBe('stopped');
    expect((await fetch(d.health_check)).status).toBe(503);

    const again = await stop(d.deployment_id);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`✔ ${d.deployment_id} is already stopped; nothing to do`);
    const json = await stop(d.deployment_id, '--json');
    expect(json.code).toBe(0);
    expect(json.json()).toMatchObject({ deployment_id: d.deployment_id, status: 'stopped' });
  });

  it('--json is the stopped deployment', async () => {
    const d = await t.deploy(await t.addServer('weather'), 'development');
    const result = await stop(d.deployment_id, '--json');
    expect(result.code).toBe(0);
    expect(result.json()).toMatchObject({
      deployment_id: d.deployment_id,
      status: 'stopped',
      transitions: [{ status: 'deploying' }, { status: 'deployed' }, { status: 'stopped' }],
    });
  });

  it('an unknown or malformed id is exit 2 with a next step', async () => {
    const unknown = await stop('deploy_doesnotexist');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no deployment deploy_doesnotexist');
    const serverId = await stop('mcp_abc');
    expect(serverId.code).toBe(2);
    expect(serverId.stderr).toContain('that is a server id');
  });
});
