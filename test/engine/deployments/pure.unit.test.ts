import { describe, expect, it } from 'vitest';
import { decideScale, type ScaleInput } from '../../../src/engine/deployments/autoscale.js';
import { checkDomain, devIdleFromEnv, resolveScaling, restartDelay } from '../../../src/engine/deployments/limits.js';
import { safeToRepeat } from '../../../src/engine/gateway/upstream.js';
import { splitTarget } from '../../../src/engine/gateway/gateway.js';
import type { LiveDeployment } from '../../../src/engine/deployments/live-deployment.js';
import { isHealthCheckLine, toLogLine } from '../../../src/engine/deployments/log-lines.js';
import {
  findCallFailure,
  inspectRequest,
  loggableAsIs,
  parseSseMessages,
  redactForLog,
} from '../../../src/engine/gateway/mcp-messages.js';
import { applyTransition, canTransition, wasDeployed } from '../../../src/engine/deployments/states.js';
import type { Deployment } from '../../../src/api/contract.js';

describe('resolveScaling', () => {
  it.each([
    ['development', undefined, { ok: true, min: 1, max: 1 }],
    ['staging', undefined, { ok: true, min: 1, max: 1 }],
    ['staging', { max_instances: 2 }, { ok: true, min: 1, max: 2 }],
    ['production', undefined, { ok: true, min: 2, max: 4 }],
    ['production', { min_instances: 6 }, { ok: true, min: 6, max: 6 }],
    ['production', { min_instances: 3, max_instances: 8 }, { ok: true, min: 3, max: 8 }],
    // scale to zero: none while idle, one while awake, more on load
    ['production', { min_instances: 0 }, { ok: true, min: 1, max: 4, zero: true }],
    ['production', { min_instances: 0, max_instances: 8, idle_seconds: 30 }, { ok: true, min: 1, max: 8, zero: true }],
  ] as const)('%s %j → %j', (environment, scaling, expected) => {
    expect(resolveScaling(environment, scaling)).toEqual(expected);
  });

  it.each(['process', 'docker', undefined])(
    'production min_instances 0 on the %s runner is a scale to zero',
    (runner) => {
      expect(resolveScaling('production', { min_instances: 0 }, runner)).toEqual({
        ok: true,
        min: 1,
        max: 4,
        zero: true,
      });
    },
  );

  it.each([
    ['swarm', /Swarm service.*from 2 to 8.*MCPCTL_SWARM=off/],
    ['kubernetes', /kubernetes runner.*from 2 to 8.*KEDA/],
  ])('production min_instances 0 on the %s runner is refused, saying what to do', (runner, message) => {
    expect(resolveScaling('production', { min_instances: 0 }, runner)).toEqual({
      ok: false,
      problems: [{ path: 'config.scaling.min_instances', message: expect.stringMatching(message) }],
    });
    // any other count is as on the engine's own runners
    expect(resolveScaling('production', { min_instances: 2 }, runner)).toEqual({ ok: true, min: 2, max: 4 });
  });

  it.each([
    [
      'production',
      { min_instances: 1 },
      'config.scaling.min_instances',
      /^must be 0 \(scale to zero when idle\) or from 2 to 8 in production \(got 1\)$/,
    ],
    [
      'production',
      { min_instances: 0, idle_seconds: 0 },
      'config.scaling.idle_seconds',
      /must not be 0 \(never idle\) with min_instances 0/,
    ],
    ['production', { min_instances: 0, max_instances: 1 }, 'config.scaling.max_instances', /from 2 to 8.*\(got 1\)/],
    [
      'development',
      { min_instances: 0 },
      'config.scaling.min_instances',
      /^must be exactly 1 in development \(got 0\); a development deployment holds no instance while idle anyway/,
    ],
    ['staging', { min_instances: 0 }, 'config.scaling.min_instances', /from 1 to 2 in staging \(got 0\); a staging/],
    ['production', { max_instances: 9 }, 'config.scaling.max_instances', /from 2 to 8/],
    [
      'production',
      { min_instances: 5, max_instances: 3 },
      'config.scaling.min_instances',
      /must not exceed max_instances \(3\)/,
    ],
    ['staging', { max_instances: 3 }, 'config.scaling.max_instances', /from 1 to 2 in staging/],
    ['development', { max_instances: 2 }, 'config.scaling.max_instances', /exactly 1/],
  ] as const)('%s %j is refused at %s', (environment, scaling, path, message) => {
    const result = resolveScaling(environment, scaling);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems[0]).toMatchObject({ path, message: expect.stringMatching(message) });
  });
});

describe('small rules', () => {
  it.each([
    ['mcp.example.com', true],
    ['a-b.c', true],
    ['localhost', false],
    ['10.0.0.1', false],
    ['https://x.com', false],
    ['x.com:80', false],
    ['-bad.com', false],
  ])('domain %s allowed: %s', (domain, ok) => {
    expect(checkDomain(domain) === undefined).toBe(ok);
  });

  it('restart delays double up to the cap', () => {
    const limits = { restartBackoffMs: 100, restartBackoffMaxMs: 500 };
    expect([1, 2, 3, 4, 5].map((n) => restartDelay(n, limits))).toEqual([100, 200, 400, 500, 500]);
  });

  it.each([
    [{ MCPCTL_DEV_IDLE_MINUTES: '2' }, 120_000],
    [{ MCPCTL_DEV_IDLE_MINUTES: '0' }, undefined],
    [{ MCPCTL_DEV_IDLE_MINUTES: 'soon' }, undefined],
    [{}, undefined],
  ])('MCPCTL_DEV_IDLE_MINUTES %j → %j ms', (env, expected) => {
    expect(devIdleFromEnv(env)).toBe(expected);
  });

  it('allows only the transitions of docs/api.md', () => {
    const states = ['deploying', 'deployed', 'failed', 'stopped'] as const;
    const allowed = states.flatMap((from) =>
      states.filter((to) => canTransition(from, to)).map((to) => `${from}→${to}`),
    );
    expect(allowed).toEqual(['deploying→deployed', 'deploying→failed', 'deployed→failed', 'deployed→stopped']);
  });

  it('records a transition with its time, reason and deploy_time', () => {
    const d: Deployment = {
      deployment_id: 'deploy_x',
      status: 'deploying',
      url: 'u',
      health_check: 'u/health',
      deploy_time: null,
      created_at: '2026-01-01T00:00:00.000Z',
      transitions: [{ status: 'deploying', at: '2026-01-01T00:00:00.000Z' }],
    };
    applyTransition(d, 'failed', Date.parse('2026-01-01T00:00:01.234Z'), 'no luck');
    expect(d).toMatchObject({ status: 'failed', deploy_time: 1.23, reason: 'no luck', stage: 'failed' });
    expect(d.transitions!.at(-1)).toEqual({ status: 'failed', at: '2026-01-01T00:00:01.234Z', reason: 'no luck' });
    expect(wasDeployed(d)).toBe(false);
  });
});

describe('decideScale', () => {
  const base: ScaleInput = {
    current: 2,
    min: 2,
    max: 4,
    load: 0,
    targetPerInstance: 4,
    now: 10_000,
    lowSince: undefined,
    scaleDownDelayMs: 1000,
  };
  it.each([
    ['steady load stays', { load: 6 }, { desired: 2, lowSince: undefined }],
    ['more load scales up at once, as far as needed', { load: 13 }, { desired: 4, lowSince: undefined }],
    ['never above max', { load: 100 }, { desired: 4, lowSince: undefined }],
    ['never below min', { load: 0 }, { desired: 2, lowSince: undefined }],
    ['low load starts the clock', { current: 4, load: 1 }, { desired: 4, lowSince: 10_000 }],
    ['low load long enough removes one', { current: 4, load: 1, lowSince: 9000 }, { desired: 3, lowSince: 10_000 }],
    ['not yet long enough', { current: 4, load: 1, lowSince: 9500 }, { desired: 4, lowSince: 9500 }],
    ['load back up resets the clock', { current: 4, load: 15, lowSince: 9500 }, { desired: 4, lowSince: undefined }],
  ])('%s', (_name, change, expected) => {
    expect(decideScale({ ...base, ...change })).toEqual(expected);
  });
});

describe('MCP messages', () => {
  it.each([
    [
      '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get","arguments":{"a":1}}}',
      { method: 'tools/call', id: 3, tool: 'get', arguments: { a: 1 } },
    ],
    ['{"jsonrpc":"2.0","method":"notifications/initialized"}', { method: 'notifications/initialized' }],
    ['[{"jsonrpc":"2.0","id":1,"method":"ping"}]', { method: 'batch' }],
    ['not json', {}],
    ['', {}],
  ])('inspectRequest(%s)', (body, expected) => {
    expect(inspectRequest(body)).toEqual(expected);
  });

  const sse = (...messages: unknown[]) =>
    messages.map((m) => `event: message\ndata: ${JSON.stringify(m)}\n\n`).join('');
  it.each([
    ['application/json', '{"jsonrpc":"2.0","id":1,"result":{"content":[]}}', 1, false],
    ['application/json', '{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}', 1, true],
    ['application/json', '{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}', 1, true],
    ['application/json', '{"jsonrpc":"2.0","id":1,"res', 1, undefined],
    [
      'text/event-stream',
      sse({ jsonrpc: '2.0', method: 'notifications/progress' }, { jsonrpc: '2.0', id: 'a', result: { isError: true } }),
      'a',
      true,
    ],
    [
      'text/event-stream',
      sse({ jsonrpc: '2.0', id: 'other', result: { isError: true } }, { jsonrpc: '2.0', id: 'a', result: {} }),
      'a',
      false,
    ],
    ['text/event-stream', 'data: {"jsonrpc":"2.0","id":1,"result"', 1, undefined],
  ])('findCallFailure(%s, %s)', (contentType, body, id, expected) => {
    expect(findCallFailure(contentType, body, id)).toBe(expected);
  });

  it('reads SSE data fields, multi-line and CRLF included', () => {
    expect(parseSseMessages('id: 1\r\ndata: {"a":\r\ndata: 1}\r\n\r\n: comment\n\ndata: [2]\n\n')).toEqual([
      { a: 1 },
      [2],
    ]);
  });

  it('hides secret-looking values and cuts long strings for logs', () => {
    const shown = redactForLog({
      city: 'Oslo',
      apiKey: 'k',
      nested: [{ password: 'p', Authorization: 'Bearer x' }],
      long: 'x'.repeat(600),
    }) as Record<string, unknown>;
    expect(shown).toMatchObject({
      city: 'Oslo',
      apiKey: '[redacted]',
      nested: [{ password: '[redacted]', Authorization: '[redacted]' }],
    });
    expect((shown.long as string).length).toBe(501);
  });

  // loggableAsIs lets the trace skip the parse and copy: it must never say yes to a text that the copy changes.
  const redacted = (text: string) => JSON.stringify(redactForLog(JSON.parse(text)));
  it.each([
    { content: [{ type: 'text', text: 'hi' }] },
    { name: 'echo', arguments: { city: 'Oslo', days: [1, 2, 3] } },
    { a: { b: { c: { d: { e: { f: { g: { h: 'deep' } } } } } } } },
    Array.from({ length: 50 }, (_, i) => i),
  ])('takes %j as it is, as the copy would', (value) => {
    const text = JSON.stringify(value);
    expect(loggableAsIs(text)).toBe(true);
    expect(redacted(text)).toBe(text);
  });

  it.each([
    ['a secret-looking key', { apiKey: 'k' }],
    ['a key spelled with escapes', JSON.parse('{"\\u0074oken": "t"}') as unknown],
    ['a session key', { sessionId: 's' }],
    ['a whole-word PASS', { db_pass: 'p' }],
    ['an array of 51 items', Array.from({ length: 51 }, () => 1)],
    ['a string over 500 characters', { text: 'x'.repeat(501) }],
    ['a long text', { a: 'x'.repeat(300), b: 'y'.repeat(300) }],
  ])('parses a text with %s', (_what, value) => {
    expect(loggableAsIs(JSON.stringify(value))).toBe(false);
  });

  it('says no to a text that the copy changes, whatever else it holds', () => {
    for (const text of ['{"token":"t"}', '{"x":"' + 'y'.repeat(499) + '"}', `[${'1,'.repeat(50)}1]`]) {
      expect(loggableAsIs(text) && redacted(text) !== text).toBe(false);
    }
  });
});

describe('safeToRepeat', () => {
  const live = {
    ctx: {
      server: {
        definition: {
          tools: [
            { name: 'lookup', annotations: { readOnlyHint: true } },
            { name: 'upsert', annotations: { idempotentHint: true } },
            { name: 'send_mail', annotations: { readOnlyHint: false } },
            { name: 'plain' },
          ],
        },
      },
    },
  } as unknown as LiveDeployment;
  it.each([
    [{ method: 'initialize' }, true],
    [{ method: 'tools/list' }, true],
    [{ method: 'notifications/initialized' }, true],
    [{ method: 'tools/call', tool: 'lookup' }, true],
    [{ method: 'tools/call', tool: 'upsert' }, true],
    [{ method: 'tools/call', tool: 'send_mail' }, false],
    [{ method: 'tools/call', tool: 'plain' }, false],
    [{ method: 'tools/call', tool: 'unknown' }, false],
    [{ method: 'batch' }, false],
    [{}, false],
  ])('%j → %s', (info, expected) => {
    expect(safeToRepeat(info, live)).toBe(expected);
  });
});

describe('runtime log lines', () => {
  it('become deployment log lines: message or event first, then the other fields', () => {
    const line = toLogLine(
      {
        time: '2026-01-01T00:00:00.000Z',
        level: 'info',
        event: 'request',
        method: 'POST',
        status: 200,
        rpc: 'tools/call',
        request_id: 'req_1',
      },
      'i2',
      0,
    );
    expect(line).toEqual({
      time: '2026-01-01T00:00:00.000Z',
      level: 'info',
      message: 'request method=POST status=200 rpc=tools/call',
      instance: 'i2',
      request_id: 'req_1',
    });
    expect(toLogLine({ level: 'loud', msg: 'plain' }, 'i1', Date.parse('2026-01-01T00:00:00Z'))).toMatchObject({
      level: 'info',
      message: 'plain',
      time: '2026-01-01T00:00:00.000Z',
    });
  });

  it.each([
    [{ event: 'request', path: '/health', status: 200 }, true],
    [{ event: 'request', path: '/health', status: 503 }, false],
    [{ event: 'request', path: '/mcp', status: 200 }, false],
    [{ event: 'started' }, false],
  ])('%j is a health-check line: %s', (line, expected) => {
    expect(isHealthCheckLine(line)).toBe(expected);
  });
});

describe('splitTarget', () => {
  it.each([
    '/d/deploy_abc/mcp',
    '/d/deploy_abc/mcp?x=1&y=%20z',
    '/d/deploy_abc/mcp?',
    '/d/deploy_abc/mcp#frag',
    '/d/deploy_abc/mcp?q=1#frag',
    '/mcp',
    '/health',
    '/d/a/../b/mcp',
    '/d/a/./mcp',
    '/d/%2e%2e/mcp',
    '/d/a\\b/mcp',
    '//evil/d/x/mcp',
    '/d/x y/mcp',
    '/d/x/mcp?a=\'b\'&c="d"<e>',
    '/d/x/mcp?a=b c',
    '/d/caf\u00e9/mcp',
    '/.well-known/x',
  ])('%s: the path and query URL gives', (target) => {
    const url = new URL(target, 'http://gateway');
    expect(splitTarget(target)).toEqual({ pathname: url.pathname, search: url.search });
  });
});
