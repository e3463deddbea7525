/**
 * A deployment named as people name it, with the real binary in CI mode: deployed from a file with
 * `-e prod`, then reached as `weather.production` by status, logs and metrics, and with no argument
 * from the folder of its server.yaml; the MCP URL deploy prints still answers after a second deploy
 * and its base URL describes it; another file with the same server name is refused without
 * --replace and names what it replaced with it; `ls` fits 100 columns.
 */
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, runBin, type BinResult, type Sandbox } from '../support/cli.js';
import { BIN, killEngineOf, requireBuilt, ROOT } from '../support/app.js';

let box: Sandbox;
let firstId: string;
let printedUrl: string;

const mcpctl = (args: string[], cwd = box.dir, env: Record<string, string> = {}): Promise<BinResult> =>
  runBin(BIN, args, { env: { ...box.env, CI: 'true', ...env }, cwd });

/** POST initialize to an MCP URL: its HTTP status. */
async function initialize(url: string): Promise<number> {
  const answer = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'names-test', version: '1' } },
    }),
  });
  await answer.body?.cancel();
  return answer.status;
}

beforeAll(async () => {
  requireBuilt();
  box = await createSandbox();
  await cp(join(ROOT, 'examples', 'weather'), join(box.dir, 'examples', 'weather'), { recursive: true });
  // the same server name, defined in another file
  await cp(join(ROOT, 'examples', 'weather'), join(box.dir, 'other'), { recursive: true });
  const other = join(box.dir, 'other', 'server.yaml');
  await writeFile(other, (await readFile(other, 'utf8')).replace(/^version: .*$/m, 'version: 9.9.9'));
}, 60_000);

afterAll(async () => {
  killEngineOf(box.env.MCPCTL_HOME!);
  await box.cleanup();
});

describe('names instead of ids', () => {
  it('deploys with -e prod and prints the stable MCP URL', async () => {
    const deploy = await mcpctl(['deploy', 'examples/weather/server.yaml', '-e', 'prod']);
    expect(deploy.code, deploy.stderr).toBe(0);
    expect(deploy.stdout).toContain('✔ Deployed weather to production');
    const connect = /→ connect an MCP client to (\S+)/.exec(deploy.stdout);
    expect(connect?.[1]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/d\/weather\.production\/mcp$/);
    printedUrl = connect![1]!;
    firstId = /deployment\s+(deploy_\w+)/.exec(deploy.stdout)![1]!;
    expect(await initialize(printedUrl)).toBe(200);
  }, 120_000);

  it('status, logs and metrics take weather.production', async () => {
    const status = await mcpctl(['status', 'weather.production', '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ deployment_id: firstId, status: 'deployed' });
    const logs = await mcpctl(['logs', 'weather.production']);
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout).toContain('deployment deployed');
    const metrics = await mcpctl(['metrics', 'weather.production', '-q']);
    expect(metrics.code, metrics.stderr).toBe(0);
    expect(metrics.stdout).toMatch(/^requests=\d+ /);
  }, 60_000);

  it('status with no argument, in the folder of server.yaml, finds its deployment', async () => {
    const status = await mcpctl(['status', '--json'], join(box.dir, 'examples', 'weather'));
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ deployment_id: firstId });
    const nothing = await mcpctl(['status', 'nothing.production']);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain('no deployment is named nothing.production');
    expect(nothing.stderr).toContain('mcpctl ls');
  }, 60_000);

  it('the printed MCP URL still answers after a second deploy; its base URL describes the deployment', async () => {
    const again = await mcpctl(['deploy', 'examples/weather', '-e', 'PROD', '--json']);
    expect(again.code, again.stderr).toBe(0);
    const second = JSON.parse(again.stdout) as { deployment_id: string; url: string; replaced?: unknown };
    expect(second.deployment_id).not.toBe(firstId);
    expect(second.replaced).toMatchObject({ deployment_id: firstId, server: 'weather', environment: 'production' });
    // the folder was named, not the file: which file was read is said
    expect(again.stderr).toContain(`using ${join('examples', 'weather', 'server.yaml')}`);
    expect(await initialize(printedUrl)).toBe(200);
    // the first deployment's own URL ends with it
    expect(await initialize(`${second.url.replace(second.deployment_id, firstId)}/mcp`)).toBe(503);

    const base = printedUrl.replace(/\/mcp$/, '');
    const json = await fetch(base);
    expect(json.status).toBe(200);
    expect(await json.json()).toMatchObject({
      name: 'weather.production',
      deployment_id: second.deployment_id,
      status: 'deployed',
      mcp_url: printedUrl,
    });
    const page = await fetch(base, { headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await page.text()).toContain(printedUrl);
  }, 120_000);

  it('another file with the same server name is refused from CI without --replace; with it, says what it replaced', async () => {
    const current = JSON.parse((await mcpctl(['status', 'weather.prod', '--json'])).stdout) as {
      deployment_id: string;
    };
    const refused = await mcpctl(['deploy', 'other/server.yaml', '-e', 'production']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--replace');
    expect(refused.stderr).toContain(current.deployment_id);
    const replaced = await mcpctl(['deploy', 'other/server.yaml', '-e', 'production', '--replace']);
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(replaced.stdout).toMatch(new RegExp(`replaces ${current.deployment_id} of weather .*\\d+ (s|min) old`));
  }, 120_000);

  it('ls fits 100 columns', async () => {
    const ls = await mcpctl(['ls'], box.dir, { COLUMNS: '100' });
    expect(ls.code, ls.stderr).toBe(0);
    expect(ls.stdout).toContain('weather.production');
    for (const line of ls.stdout.split('\n')) expect(line.length, line).toBeLessThanOrEqual(100);
  }, 60_000);
});
