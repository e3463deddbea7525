/**
 * `mcpctl logs`: a follow that ends by itself when the deployment stops or is replaced (it used
 * to go on forever), and the filters --level, --grep and --instance, applied by the engine (the
 * query parameters of GET /v1/deploy/{id}/logs) and shown by the CLI.
 */
import { PassThrough, Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run } from '../../src/cli/main.js';
import { runCli } from '../support/cli.js';
import { callTool } from '../support/deployments.js';
import { startTestEngine, type TestEngine } from '../support/engine.js';
import { waitUntil } from '../support/wait.js';

let t: TestEngine;

const logs = (...args: string[]) => runCli(['logs', ...args], { env: t.env, cwd: t.sandbox.dir });

/** `mcpctl logs <args>` in the background; it is stopped as Ctrl-C would after 20 s, so a follow that never ends fails the test. */
function follow(args: string[]): {
  stdout: () => string;
  stderr: () => string;
  exit: Promise<number>;
  aborted: () => boolean;
} {
  const controller = new AbortController();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
  const safety = setTimeout(() => controller.abort(), 20_000);
  const exit = run(['logs', ...args], {
    stdout,
    stderr,
    stdin: Readable.from([]),
    env: t.env,
    cwd: t.sandbox.dir,
    signal: controller.signal,
  }).finally(() => clearTimeout(safety));
  return { stdout: () => out, stderr: () => err, exit, aborted: () => controller.signal.aborted };
}

beforeEach(async () => {
  t = await startTestEngine();
});
afterEach(async () => {
  await t.close();
});

describe('mcpctl logs --follow', () => {
  it('ends with exit 0 when the deployment stops, its last line saying why', async () => {
    const d = await t.deploy(await t.addServer('weather'), 'development');
    const following = follow([d.deployment_id, '--follow']);
    await waitUntil('the recent lines', () => following.stdout().includes('healthy'));
    await t.client.stop(d.deployment_id);
    expect(await following.exit).toBe(0);
    expect(following.aborted()).toBe(false);
    expect(following.stdout()).toContain('deployment stopped');
    expect(following.stderr().trim().split('\n').at(-1)).toBe(
      `the log ends: ${d.deployment_id} stopped (stopped on request)`,
    );
  });

  it('ends when the deployment is replaced by a newer one, naming it', async () => {
    const server = await t.addServer('weather');
    const d = await t.deploy(server, 'development');
    const following = follow([d.deployment_id, '--follow', '--json']);
    await waitUntil('the recent lines', () => following.stdout().includes('healthy'));
    const newer = await t.deploy(server, 'development');
    expect(await following.exit).toBe(0);
    expect(following.aborted()).toBe(false);
    // NDJSON on stdout, the reason on stderr
    for (const line of following.stdout().split('\n').filter(Boolean)) {
      expect(() => JSON.parse(line) as unknown).not.toThrow();
    }
    expect(following.stderr()).toContain(
      `the log ends: ${d.deployment_id} stopped (replaced by ${newer.deployment_id})`,
    );
  });

  it('of a deployment that no longer runs prints its lines and ends at once', async () => {
    const d = await t.deploy(await t.addServer('weather'), 'development');
    await t.client.stop(d.deployment_id);
    const following = follow([d.deployment_id, '--follow']);
    expect(await following.exit).toBe(0);
    expect(following.aborted()).toBe(false);
    expect(following.stdout()).toContain('deploying weather');
    expect(following.stderr()).toContain(`the log ends: ${d.deployment_id} stopped`);
  });

  it('follows with the filters: only matching lines come through', async () => {
    const d = await t.deploy(await t.addServer('weather'), 'development');
    const following = follow([d.deployment_id, '--follow', '--grep', 'needle', '--json']);
    await callTool(`${d.url}/mcp`, 'echo', { text: 'hay' });
    await callTool(`${d.url}/mcp`, 'echo', { text: 'NEEDLE 1' });
    await waitUntil('the matching line', () => following.stdout().includes('NEEDLE 1'));
    await t.client.stop(d.deployment_id);
    expect(await following.exit).toBe(0);
    const messages = following
      .stdout()
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { message: string }).message);
    expect(messages.length).toBeGreaterThan(0);
    for (const message of messages) expect(message.toLowerCase()).toContain('needle');
  });
});

describe('mcpctl logs --level, --grep, --instance', () => {
  it('the engine filters, and the CLI shows only what was asked', async () => {
    const d = await t.deploy(await t.addServer('weather'), 'development');
    await callTool(`${d.url}/mcp`, 'echo', { text: 'needle-42' });
    await callTool(`${d.url}/mcp`, 'echo', { text: 'other' });
    const messages = async (...args: string[]) => {
      const result = await logs(d.deployment_id, '--json', ...args);
      expect(result.code).toBe(0);
      return (result.json().lines as Array<{ level: string; message: string; instance?: string }>).map((l) => l);
    };
    const all = await messages();
    expect(all.some((line) => line.level === 'debug')).toBe(true);

    const info = await messages('--level', 'info');
    expect(info.length).toBeGreaterThan(0);
    expect(info.every((line) => line.level !== 'debug')).toBe(true);

    const text = await messages('--grep', 'NEEDLE-42');
    expect(text.length).toBeGreaterThan(0);
    expect(text.every((line) => line.message.includes('needle-42'))).toBe(true);
    const expression = await messages('--grep', '/needle-\\d+/');
    expect(expression.map((line) => line.message)).toEqual(text.map((line) => line.message));

    const i1 = await messages('--instance', 'i1');
    expect(i1.length).toBeGreaterThan(0);
    expect(i1.every((line) => line.instance === 'i1')).toBe(true);
    expect(await messages('--instance', 'i9')).toEqual([]);

    // the engine itself filters: what any client of the API gets
    const direct = await t.client.logs(d.deployment_id, { level: 'info', grep: '/healthy/' });
    expect(direct.length).toBeGreaterThan(0);
    expect(direct.every((line) => line.level !== 'debug' && line.message.includes('healthy'))).toBe(true);

    const none = await logs(d.deployment_id, '--level', 'error');
    expect(none.code).toBe(0);
    expect(none.stdout).toContain('No log lines match.');
  });

  it('refuses an unusable --grep or --level, exit 2, saying what to pass', async () => {
    const d = await t.deploy(await t.addServer('weather'), 'development');
    const bad = await logs(d.deployment_id, '--grep', '/(a)\\1/');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('backreferences');
    expect(bad.stderr).toContain('pass a text, or an expression between slashes');
    const level = await logs(d.deployment_id, '--level', 'loud');
    expect(level.code).toBe(2);
    expect(level.stderr).toContain('debug, info, warn, error');
    // the API answers 400 with the parameter named
    await expect(t.client.logs(d.deployment_id, { grep: '/(/' })).rejects.toMatchObject({
      status: 400,
      details: [expect.objectContaining({ path: 'query.grep' })],
    });
  });
});
