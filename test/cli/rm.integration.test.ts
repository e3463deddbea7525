/**
 * `mcpctl rm` and the engine's removals (DELETE /v1/deploy/{id}, DELETE /v1/servers/{mcp_id}), and
 * the retention that removes old development deployments on its own.
 */
import { access, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/errors.js';
import { createLogger } from '../../src/engine/engine-log.js';
import { runCli, WEATHER_YAML } from '../support/cli.js';
import { startTestEngine, type TestEngine } from '../support/engine.js';

let t: TestEngine | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const rm = (engine: TestEngine, ...args: string[]) =>
  runCli(['rm', ...args], { env: engine.env, cwd: engine.sandbox.dir });
const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );
const logFile = (engine: TestEngine, id: string) =>
  join(engine.sandbox.env.MCPCTL_HOME!, 'deployment-logs', `${id}.ndjson`);

async function apiError(work: Promise<unknown>): Promise<ApiError> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe('mcpctl rm', () => {
  it('without --yes where no one can be asked: refused, naming the flag, and nothing is removed', async () => {
    t = await startTestEngine();
    const d = await t.deploy(await t.addServer('weather'), 'development');
    await t.client.stop(d.deployment_id);
    const refused = await rm(t, d.deployment_id);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('cannot be undone');
    expect(refused.stderr).toContain('--yes');
    expect((await t.client.status(d.deployment_id)).deployment?.status).toBe('stopped');
  });

  it('removes a stopped deployment and its log; ls still works; a second rm says there is none', async () => {
    t = await startTestEngine();
    const server = await t.addServer('weather');
    const d = await t.deploy(server, 'development');
    await t.client.stop(d.deployment_id);
    await expect.poll(() => exists(logFile(t!, d.deployment_id))).toBe(true);

    const removed = await rm(t, d.deployment_id, '--yes');
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain(`✔ Removed ${d.deployment_id}`);
    expect(await exists(logFile(t, d.deployment_id))).toBe(false);
    expect(await t.engine.store.getDeployment(d.deployment_id)).toBeUndefined();

    const ls = await runCli(['ls'], { env: t.env, cwd: t.sandbox.dir });
    expect(ls.code).toBe(0);
    expect(ls.stdout).not.toContain(d.deployment_id);

    const again = await rm(t, d.deployment_id, '--yes');
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`no deployment ${d.deployment_id}`);
  });

  it('refuses a running deployment, saying to stop it first; the API answers 409 with the same advice', async () => {
    t = await startTestEngine();
    const d = await t.deploy(await t.addServer('weather'), 'production');
    const refused = await rm(t, 'weather.production', '--yes');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`${d.deployment_id} (weather.production) is deployed`);
    expect(refused.stderr).toContain(`mcpctl stop ${d.deployment_id}`);

    const error = await apiError(t.client.removeDeployment(d.deployment_id));
    expect(error.status).toBe(409);
    expect(error.message).toContain('stop it first');
    expect((await t.client.status(d.deployment_id)).deployment?.status).toBe('deployed');
  });

  it('removes a build no deployment runs, refuses one that runs (naming the deployment), --json lists both kinds', async () => {
    t = await startTestEngine();
    const unused = await t.addServer('notes');
    const used = await t.addServer('weather');
    const d = await t.deploy(used, 'staging');

    const refused = await apiError(t.client.removeServer(used.server.mcp_id));
    expect(refused.status).toBe(409);
    expect(refused.message).toContain(`used by deployment ${d.deployment_id}`);
    expect(await t.engine.store.getServer(used.server.mcp_id)).toBeDefined();

    const removed = await rm(t, unused.server.mcp_id, '--yes', '--json');
    expect(removed.code).toBe(0);
    expect(removed.json()).toMatchObject({ removed: [{ kind: 'server', server: { mcp_id: unused.server.mcp_id } }] });
    expect(await t.engine.store.getServer(unused.server.mcp_id)).toBeUndefined();

    // once its deployment is stopped, both go in one command; the stopped deployment goes first
    await t.client.stop(d.deployment_id);
    const both = await rm(t, used.server.mcp_id, d.deployment_id, '--yes', '--json');
    expect(both.code).toBe(0);
    expect(both.json()).toMatchObject({
      removed: [
        { kind: 'deployment', deployment: { deployment_id: d.deployment_id } },
        { kind: 'server', server: { mcp_id: used.server.mcp_id } },
      ],
    });
    const ls = await runCli(['ls', '--json'], { env: t.env, cwd: t.sandbox.dir });
    expect(ls.code).toBe(0);
  });

  it('removes a real build with its bundle; building the same definition again makes it anew', async () => {
    t = await startTestEngine();
    await writeFile(join(t.sandbox.dir, 'server.yaml'), WEATHER_YAML);
    const built = await runCli(['build', '--json'], { env: t.env, cwd: t.sandbox.dir });
    expect(built.code).toBe(0);
    const mcpId = built.json<{ mcp_id: string }>().mcp_id;
    const { bundleDir } = (await t.engine.store.getServer(mcpId))!;
    expect(await exists(bundleDir)).toBe(true);

    const removed = await rm(t, mcpId, '--yes');
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain(`✔ Removed build ${mcpId} (weather) and its bundle`);
    expect(await exists(bundleDir)).toBe(false);

    const again = await runCli(['build', '--json'], { env: t.env, cwd: t.sandbox.dir });
    expect(again.code).toBe(0);
    expect(again.json<{ mcp_id: string }>().mcp_id).not.toBe(mcpId);
    expect(await exists(bundleDir)).toBe(true);
  });

  it('a rollback to a deployment whose build was removed says so', async () => {
    t = await startTestEngine();
    const first = await t.addServer('weather');
    const a = await t.deploy(first, 'development');
    const b = await t.deploy(await t.addServer('weather'), 'development');
    await expect.poll(async () => (await t!.client.status(a.deployment_id)).deployment?.status).toBe('stopped');
    await t.client.removeServer(first.server.mcp_id);
    const error = await apiError(t.client.rollback(b.deployment_id));
    expect(error.status).toBe(409);
    expect(error.message).toContain(`the build ${first.server.mcp_id} of ${a.deployment_id} no longer exists`);
    // its deployment stays listed, without its build
    const ls = await runCli(['ls'], { env: t.env, cwd: t.sandbox.dir });
    expect(ls.code).toBe(0);
    expect(ls.stdout).toContain(a.deployment_id);
    expect((await runCli(['status', a.deployment_id], { env: t.env, cwd: t.sandbox.dir })).code).toBe(0);
  });
});

describe('retention', () => {
  it('removes old stopped development deployments and their logs, never production ones', async () => {
    const lines: string[] = [];
    const logger = createLogger({ write: (line) => lines.push(line) });
    t = await startTestEngine({ logger, limits: { retention: { developmentMs: 200, buildMs: 0 }, pruneEveryMs: 100 } });
    const dev = await t.deploy(await t.addServer('notes'), 'development');
    const prod = await t.deploy(await t.addServer('weather'), 'production');
    await t.client.stop(dev.deployment_id);
    await t.client.stop(prod.deployment_id);
    await expect.poll(() => t!.engine.store.getDeployment(dev.deployment_id), { timeout: 5000 }).toBeUndefined();
    expect(await exists(logFile(t, dev.deployment_id))).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await t.client.status(prod.deployment_id)).deployment?.status).toBe('stopped');
    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged).toContainEqual(
      expect.objectContaining({
        level: 'info',
        msg: 'removed old records past their retention',
        component: 'housekeeping',
        deployments: [dev.deployment_id],
      }),
    );
  });
});
