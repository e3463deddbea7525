import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Metrics } from '../../../src/api/contract.js';
import { percentile, summarizeMetrics, type RequestSample } from '../../../src/engine/deployments/samples.js';
import { callTool, createHarness, type Harness } from '../../support/deployments.js';

describe('summarizeMetrics', () => {
  const now = Date.parse('2026-01-01T00:10:00Z');
  const sample = (secondsAgo: number, latencyMs: number, extra: Partial<RequestSample> = {}): RequestSample => ({
    t: now - secondsAgo * 1000,
    latencyMs,
    status: 200,
    ...extra,
  });

  it.each([
    [[], 50, null],
    [[7], 50, 7],
    [[1, 2, 3, 4], 50, 2],
    [[1, 2, 3, 4], 95, 4],
    [Array.from({ length: 100 }, (_, i) => i + 1), 99, 99],
  ])('percentile(%j, %i) is %j', (values, p, expected) => {
    expect(percentile(values, p)).toBe(expected);
  });

  it('counts requests, tool calls and errors in the window only, with a series of ten points', () => {
    const samples = [
      sample(400, 1, { method: 'tools/call', tool: 'old', toolError: true }), // outside the 300 s window
      sample(250, 10, { method: 'tools/call', tool: 'a', toolError: false }),
      sample(100, 20, { method: 'tools/call', tool: 'a', toolError: true }),
      sample(50, 30, { method: 'tools/call', tool: 'b', toolError: false }),
      sample(10, 40, { method: 'tools/list' }),
    ];
    const m = summarizeMetrics(samples, { deploymentId: 'deploy_x', windowSeconds: 300, now });
    expect(Metrics.parse(m)).toBeTruthy();
    expect(m).toMatchObject({
      requests: 4,
      throughput_rps: 0.01,
      tool_calls: 3,
      tool_errors: 1,
      tool_error_rate: 0.3333,
      per_tool: { a: { calls: 2, errors: 1 }, b: { calls: 1, errors: 0 } },
      latency_ms: { p50: 20, p95: 40, p99: 40 },
    });
    expect(m.series).toHaveLength(10);
    expect(m.series!.reduce((sum, point) => sum + point.requests, 0)).toBe(4);
    expect(m.series![1]).toMatchObject({ requests: 1, p50_ms: 10 });
    expect(m.series![0]).toMatchObject({ requests: 0, p50_ms: null });
  });

  it('has null rates and percentiles with no traffic, and counts throughput over the age of a young deployment', () => {
    const empty = summarizeMetrics([], { deploymentId: 'deploy_x', windowSeconds: 60, now });
    expect(empty).toMatchObject({
      requests: 0,
      tool_error_rate: null,
      latency_ms: { p50: null, p95: null, p99: null },
    });
    const young = summarizeMetrics([sample(1, 5), sample(2, 5), sample(3, 5), sample(4, 5)], {
      deploymentId: 'deploy_x',
      windowSeconds: 300,
      now,
      startedAt: now - 4000,
    });
    expect(young.throughput_rps).toBe(1);
  });
});

describe('metrics through the gateway', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await createHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  it('records every MCP request: latency, tool, and tool errors from isError, JSON-RPC errors and SSE answers', async () => {
    const server = await h.addServer('weather');
    const d = await h.deploy(server, 'development');
    const mcp = `${d.url}/mcp`;
    for (let i = 0; i < 5; i += 1) expect((await callTool(mcp, 'echo', { text: `call ${i}` })).text).toBe(`call ${i}`);
    expect((await callTool(mcp, 'fail')).message?.result?.isError).toBe(true);
    expect((await callTool(mcp, 'fail')).status).toBe(200);
    expect((await callTool(mcp, 'boom')).message?.error?.message).toBe('boom');
    expect((await callTool(mcp, 'stream', { text: 'sse' })).status).toBe(200);
    const list = await fetch(mcp, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(list.status).toBe(200);
    await list.text();
    await fetch(d.health_check); // not an MCP request: not counted

    const m = await h.service.metrics(d.deployment_id, 300);
    expect(m).toMatchObject({
      deployment_id: d.deployment_id,
      window_seconds: 300,
      requests: 10,
      tool_calls: 9,
      tool_errors: 3,
      tool_error_rate: 0.3333,
      per_tool: {
        echo: { calls: 5, errors: 0 },
        fail: { calls: 2, errors: 2 },
        boom: { calls: 1, errors: 1 },
        stream: { calls: 1, errors: 0 },
      },
    });
    expect(m.latency_ms.p50).toBeGreaterThan(0);
    expect(m.latency_ms.p99).toBeGreaterThanOrEqual(m.latency_ms.p50!);
    expect(m.series!.reduce((sum, point) => sum + point.requests, 0)).toBe(10);

    await expect(h.service.metrics(d.deployment_id, 0)).rejects.toMatchObject({ code: 'bad_request' });
    await expect(h.service.metrics('deploy_unknown', 60)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('logs every MCP request and result of a development deployment, with secrets hidden', async () => {
    const server = await h.addServer('weather');
    const d = await h.deploy(server, 'development');
    await callTool(`${d.url}/mcp`, 'echo', { text: 'visible', api_key: 'sk-very-secret' });
    const lines = await h.service.logs(d.deployment_id, { limit: 1000 });
    const request = lines.find((l) => l.level === 'debug' && l.message.startsWith('→ POST tools/call echo'));
    expect(request?.message).toContain('"text":"visible"');
    expect(request?.message).toContain('[redacted]');
    expect(request?.request_id).toMatch(/^req_/);
    const answer = lines.find((l) => l.level === 'debug' && l.message.startsWith('← 200 ok'));
    expect(answer?.message).toContain('visible');
    expect(JSON.stringify(lines)).not.toContain('sk-very-secret');
    // The instance got the debug log level.
    expect(lines.some((l) => l.instance === 'i1' && /debug logging on/.test(l.message))).toBe(true);
    // A production deployment does not log requests.
    const prod = await h.deploy(server, 'production');
    await callTool(`${prod.url}/mcp`, 'echo', { text: 'quiet' });
    const prodLines = await h.service.logs(prod.deployment_id, { limit: 1000 });
    expect(prodLines.some((l) => l.message.includes('quiet'))).toBe(false);
  });
});
