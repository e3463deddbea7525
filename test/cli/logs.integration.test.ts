import { PassThrough, Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseSince } from '../../src/cli/commands/logs.js';
import { run } from '../../src/cli/main.js';
import { runCli } from '../support/cli.js';
import { callTool } from '../support/deployments.js';
import { startTestEngine, type TestEngine } from '../support/engine.js';
import { waitUntil } from '../support/wait.js';

let t: TestEngine;

const logs = (...args: string[]) => runCli(['logs', ...args], { env: t.env, cwd: t.sandbox.dir });

/**
 * Runs `mcpctl logs <args>` until what it printed holds `marker`, then stops it as Ctrl-C would
 * (or after 15 s, so that a test that never sees the marker fails instead of hanging).
 */
function logsUntil(args: string[], marker: string): { printed: () => string; exit: Promise<number> } {
  const controller = new AbortController();
  const stdout = new PassThrough();
  let printed = '';
  stdout.on('data', (chunk: Buffer) => {
    printed += chunk.toString('utf8');
    if (printed.includes(marker)) controller.abort();
  });
  const safety = setTimeout(() => controller.abort(), 15_000);
  const exit = run(['logs', ...args], {
    stdout,
    stderr: new PassThrough(),
    stdin: Readable.from([]),
    env: t.env,
    cwd: t.sandbox.dir,
    signal: controller.signal,
  }).finally(() => clearTimeout(safety));
  return { printed: () => printed, exit };
}

describe('mcpctl logs', () => {
  beforeEach(async () => {
    t = await startTestEngine();
  });
  afterEach(async () => {
    await t.close();
  });

  it('prints the deployment log: events, instance output and (in development) MCP requests', async () => {
    const d = await t.deploy(await t.addServer('weather'), 'development');
    await callTool(`${d.url}/mcp`, 'echo', { text: 'hello logs' });
    const result = await logs(d.deployment_id);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}deploying weather/m);
    expect(result.stdout).toMatch(/INFO {2}i1 {2}instance i1 healthy/);
    expect(result.stdout).toMatch(/DEBUG → POST tools\/call echo \{"text":"hello logs"\}\s+req_\w+/);

    const json = await logs(d.deployment_id, '--json', '--lines', '2');
    expect(json.json().lines).toHaveLength(2);
    const none = await logs(d.deployment_id, '--since', new Date(Date.now() + 60_000).toISOString());
    expect(none.stdout).toContain('No log lines since then.');
  });

  it('--follow prints new lines as they come until Ctrl-C, which ends it with exit 0', async () => {
    const d = await t.deploy(await t.addServer('weather'), 'development');
    const following = logsUntil([d.deployment_id, '--follow'], 'marker-after-start');
    // The recent lines come first; a call made now shows up after them.
    await waitUntil('the recent lines', () => following.printed().includes('healthy'));
    await callTool(`${d.url}/mcp`, 'echo', { text: 'marker-after-start' });
    expect(await following.exit).toBe(0);
    const seen = following.printed();
    expect(seen.indexOf('instance i1 healthy')).toBeLessThan(seen.indexOf('marker-after-start'));
  });

  it('--follow --lines N starts with the newest N lines only', async () => {
    const d = await t.deploy(await t.addServer('weather'), 'development');
    await callTool(`${d.url}/mcp`, 'echo', { text: 'older call' });
    const all = (await logs(d.deployment_id, '--json')).json().lines as Array<{ message: string }>;
    expect(all.length).toBeGreaterThan(2);
    const newest = all.at(-1)!.message;

    const following = logsUntil([d.deployment_id, '--follow', '--lines', '1', '--json'], 'marker-after-start');
    await waitUntil('the newest line', () => following.printed() !== '');
    await callTool(`${d.url}/mcp`, 'echo', { text: 'marker-after-start' });
    expect(await following.exit).toBe(0);
    const lines = following
      .printed()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { message: string });
    expect(lines[0]!.message).toBe(newest);
    expect(lines.some((line) => line.message.includes('deploying weather'))).toBe(false);
    expect(lines.at(-1)!.message).toContain('marker-after-start');
  });

  it('rejects a bad id or --since, exit 2', async () => {
    expect((await logs('deploy_nope')).stderr).toContain('no deployment deploy_nope');
    const bad = await logs('deploy_nope', '--since', 'yesterday-ish');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('use a duration such as 10m');
    expect((await logs('web')).code).toBe(2);
  });
});

describe('logs --since', () => {
  it.each([
    ['30s', '2026-01-10T11:59:30.000Z'],
    ['10m', '2026-01-10T11:50:00.000Z'],
    ['2h', '2026-01-10T10:00:00.000Z'],
    ['1d', '2026-01-09T12:00:00.000Z'],
    ['2026-01-01T00:00:00Z', '2026-01-01T00:00:00.000Z'],
  ])('--since %s means %s', (value, expected) => {
    expect(parseSince(value, Date.parse('2026-01-10T12:00:00Z'))).toBe(expected);
  });
});
