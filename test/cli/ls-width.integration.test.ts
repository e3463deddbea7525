/**
 * `mcpctl ls` fits 100 columns whatever the names: a long server name (in the NAME column and in
 * its MCP URL) is shortened with `…`, and `--wide` and `--json` keep it whole.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { addFixtureServer } from '../support/deployments.js';
import { startTestEngine, type TestEngine } from '../support/engine.js';

let t: TestEngine;
const LONG = 'inventory-and-warehouse-stock-levels-for-every-region';

const ls = (...args: string[]) => runCli(['ls', ...args], { env: t.env, cwd: t.sandbox.dir });

beforeAll(async () => {
  t = await startTestEngine();
  // ids as the service makes them: only the names are long
  const add = (id: string, name: string) => addFixtureServer(t.engine.store, t.sandbox.dir, t.engine.url, id, name);
  await t.deploy(await add('a1', LONG), 'production');
  const stopped = await t.deploy(await add('a2', `${LONG}-old`), 'staging');
  await t.client.stop(stopped.deployment_id);
});
afterAll(async () => {
  await t.close();
});

describe('mcpctl ls with long names', () => {
  it('fits every line in 100 columns, shortening names and URLs', async () => {
    const result = await ls();
    expect(result.code, result.stderr).toBe(0);
    for (const line of result.stdout.split('\n')) expect(line.length, line).toBeLessThanOrEqual(100);
    expect(result.stdout).not.toContain(`${LONG}.production`);
    // the URL keeps its end: which deployment it reaches and `/mcp`
    expect(result.stdout).toMatch(/\/d\/inventory\S*…\S*ion\/mcp$/m);
    expect(result.stdout).toMatch(/^inventory-and\S*…\s+deploy_/m);
  });

  it('--wide and --json keep names and URLs whole', async () => {
    const wide = await ls('--wide');
    expect(wide.stdout).toContain(`${LONG}.production`);
    expect(wide.stdout).toContain(`/d/${LONG}.production/mcp`);
    expect(wide.stdout).not.toContain('…');
    const json = (await ls('--json')).json();
    expect(json.servers.map((s: { name: string }) => s.name)).toContain(LONG);
  });
});
