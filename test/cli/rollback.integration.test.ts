import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Deployment } from '../../src/api/contract.js';
import { runCli } from '../support/cli.js';
import { callTool } from '../support/deployments.js';
import { startTestEngine, type TestEngine } from '../support/engine.js';

let t: TestEngine;
beforeEach(async () => {
  t = await startTestEngine();
});
afterEach(async () => {
  await t.close();
});

const rollback = (...args: string[]) => runCli(['rollback', ...args], { env: t.env, cwd: t.sandbox.dir });

describe('mcpctl rollback', () => {
  it('redeploys the previous build and config of the same server and environment, and waits for it', async () => {
    const v1 = await t.addServer('weather', { version: '1' });
    const v2 = await t.addServer('weather', { version: '2' });
    const first = await t.deploy(v1, 'production', { env_vars: { GREETING: 'from v1' } });
    const second = await t.deploy(v2, 'production');
    expect((await callTool(`${second.url}/mcp`, 'version')).text).toBe('2');

    const result = await rollback(second.deployment_id, '--json');
    expect(result.code).toBe(0);
    const rolled = result.json<Deployment>();
    expect(rolled).toMatchObject({ status: 'deployed', mcp_id: v1.server.mcp_id, environment: 'production' });
    expect(rolled.deployment_id).not.toBe(first.deployment_id);
    expect((await callTool(`${rolled.url}/mcp`, 'version')).text).toBe('1');
    expect((await callTool(`${rolled.url}/mcp`, 'env', { name: 'GREETING' })).text).toBe('from v1');
    // Progress went to stderr as plain lines (not a terminal).
    expect(result.stderr).toContain(`rolling back ${second.deployment_id}`);
    expect(result.stderr).toMatch(/ok: rolled back: deploy_\w+ deployed in/);

    expect(rolled.rolled_back_to).toMatchObject({
      deployment_id: first.deployment_id,
      mcp_id: v1.server.mcp_id,
      created_at: first.created_at,
    });
    expect(rolled.unchanged).toBeUndefined();
  });

  it('run twice in a row rolls back once: the second run says it is already there and deploys nothing', async () => {
    const v1 = await t.addServer('weather', { version: '1' });
    const v2 = await t.addServer('weather', { version: '2' });
    const first = await t.deploy(v1, 'production');
    const second = await t.deploy(v2, 'production');
    const once = await rollback(second.deployment_id);
    expect(once.code).toBe(0);
    expect(once.stdout).toMatch(
      new RegExp(
        `^✔ Rolled back to ${first.deployment_id} \\(${v1.server.mcp_id}, made \\d+ s ago\\): deploy_\\w+ runs it$`,
        'm',
      ),
    );
    const count = async () => (await t.client.listDeployments({ environment: 'production' })).length;
    expect(await count()).toBe(3);

    // the same command again, and the rollback's own deployment: both already there
    const rolledId = /: (deploy_\w+) runs it/.exec(once.stdout)![1]!;
    for (const target of [second.deployment_id, rolledId]) {
      const again = await rollback(target);
      expect(again.code).toBe(0);
      expect(again.stdout).toContain(`Already rolled back to ${first.deployment_id} (${v1.server.mcp_id}, made `);
      expect(again.stdout).toContain(`: ${rolledId} runs it; nothing new was deployed`);
      expect(again.stderr).not.toMatch(/ok: rolled back/);
    }
    const json = await rollback(second.deployment_id, '--json');
    expect(json.json<Deployment>()).toMatchObject({ deployment_id: rolledId, unchanged: true, status: 'deployed' });
    expect(await count()).toBe(3);

    // further back than the first deployment there is nothing
    const none = await rollback(first.deployment_id);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('there is no earlier deployment of weather in production to roll back to');
  });

  it('--no-wait answers once the rollback is accepted', async () => {
    const v1 = await t.addServer('weather', { version: '1' });
    const v2 = await t.addServer('weather', { version: '2' });
    await t.deploy(v1, 'staging');
    const second = await t.deploy(v2, 'staging');
    const result = await rollback(second.deployment_id, '--no-wait');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Rollback of deploy_\w+ to deploy_\w+ \(.+\) accepted: deploy_\w+ is deploying/);
    expect(result.stdout).toMatch(/→ mcpctl status deploy_\w+ --watch/);
  });

  it('a rollback whose deployment fails is exit 6 with the reason', async () => {
    const broken = await t.addServer('weather', { failStart: true });
    const good = await t.addServer('weather');
    // The failed deployment is the one rolled back to only if it was ever deployed: make one that was.
    const first = await t.deploy(good, 'development');
    await t.engine.store.putServer({
      ...broken,
      server: { ...broken.server, mcp_id: good.server.mcp_id },
      bundleDir: broken.bundleDir,
    });
    const second = await t.deploy(await t.addServer('weather'), 'development');
    expect(first.status).toBe('deployed');
    const result = await rollback(second.deployment_id);
    expect(result.code).toBe(6);
    expect(result.stderr).toMatch(/failed: instances did not start/);
    expect(result.stderr).toContain('mcpctl logs deploy_');
  });
});
