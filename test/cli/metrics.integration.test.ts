import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../src/api/contract.js';
import { runCli } from '../support/cli.js';
import { callTool } from '../support/deployments.js';
import { startTestEngine, type TestEngine } from '../support/engine.js';

let t: TestEngine;
let d: Deployment;
beforeAll(async () => {
  t = await startTestEngine();
  d = await t.deploy(await t.addServer('weather'), 'development');
  for (let i = 0; i < 4; i += 1)
    expect((await callTool(`${d.url}/mcp`, 'echo', { text: `call ${i}` })).status).toBe(200);
  for (let i = 0; i < 2; i += 1) expect((await callTool(`${d.url}/mcp`, 'fail')).message?.result?.isError).toBe(true);
  expect((await callTool(`${d.url}/mcp`, 'boom')).message?.error?.message).toBe('boom');
});
afterAll(async () => {
  await t.close();
});

const metrics = (...args: string[]) => runCli(['metrics', ...args], { env: t.env, cwd: t.sandbox.dir });

describe('mcpctl metrics', () => {
  it('--quiet prints the figures on one line of key=value pairs', async () => {
    const result = await metrics(d.deployment_id, '-q');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^requests=7 rps=[\d.]+ p50_ms=[\d.]+ p95_ms=[\d.]+ p99_ms=[\d.]+ tool_calls=7 tool_errors=3 tool_error_rate=0\.\d+\n$/,
    );
  });

  it('shows the calls made through the gateway: counts, error rate, calls per tool, and charts', async () => {
    const result = await metrics(d.deployment_id);
    expect(result.code).toBe(0);
    const out = result.stdout;
    expect(out).toContain(`${d.deployment_id}, last 5 min`);
    expect(out).toMatch(/requests\s+7 \(/);
    expect(out).toMatch(/latency\s+p50 [\d.]+ ms\s+p95 [\d.]+ ms\s+p99 [\d.]+ ms/);
    expect(out).toMatch(/tool calls\s+7/);
    expect(out).toMatch(/tool errors\s+3 \(43%\)/);
    expect(out).toMatch(/TOOL\s+CALLS\s+ERRORS\s+ERROR RATE/);
    expect(out).toMatch(/echo\s+4\s+0\s+0%/);
    expect(out).toMatch(/fail\s+2\s+2\s+100%/);
    expect(out).toMatch(/boom\s+1\s+1\s+100%/);
    expect(out).toMatch(/p95 latency \(ms\)\s+[\d.]+ ┤/);
    expect(out).toMatch(/requests\/s\s+[\d.]+ ┤/);
    expect(out).toMatch(/█/);
  });

  it('--json is the metrics document; --window picks the window', async () => {
    const result = await metrics(d.deployment_id, '--window', '60', '--json');
    expect(result.code).toBe(0);
    expect(result.json()).toMatchObject({
      deployment_id: d.deployment_id,
      window_seconds: 60,
      requests: 7,
      tool_calls: 7,
      tool_errors: 3,
      tool_error_rate: 0.4286,
      per_tool: { echo: { calls: 4, errors: 0 }, fail: { calls: 2, errors: 2 }, boom: { calls: 1, errors: 1 } },
    });
    expect(result.json().series).toHaveLength(10);
  });

  it('a window out of bounds is exit 2', async () => {
    expect((await metrics(d.deployment_id, '--window', '0')).code).toBe(2);
    const tooWide = await metrics(d.deployment_id, '--window', '86401');
    expect(tooWide.code).toBe(2);
    expect(tooWide.stderr).toMatch(/window/);
  });

  it('a deployment with no traffic says so', async () => {
    const quiet = await t.deploy(await t.addServer('quiet'), 'development');
    const result = await metrics(quiet.deployment_id);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/requests\s+0 \(0 per second\)/);
    expect(result.stdout).toContain('no requests in this window');
  });
});
