/** Table-driven tests of the engine's pure pieces. */
import { describe, expect, it } from 'vitest';
import { BuildRequest } from '../../src/api/contract.js';
import { isLoopback } from '../../src/cli/commands/serve.js';
import { urlHost } from '../../src/engine/engine.js';
import { homePaths, resolveHome } from '../../src/engine/home.js';
import { exceedsDepth, isJsonMediaType } from '../../src/engine/http/body.js';
import { RateLimiter } from '../../src/engine/http/rate-limit.js';
import { Router } from '../../src/engine/http/router.js';
import { issuesToDetails } from '../../src/engine/http/zod-details.js';
import { formatPath } from '../../src/shared/paths.js';
import { newId } from '../../src/engine/ids.js';
import { checkBuildLimits, DEFAULT_LIMITS, engineLimits } from '../../src/engine/engine-limits.js';
import { etagOf } from '../../src/engine/http/routes.js';

describe('formatPath', () => {
  it.each([
    [[], ''],
    [['name'], 'name'],
    [['tools', 0, 'name'], 'tools[0].name'],
    [['config', 'scaling', 'max_instances'], 'config.scaling.max_instances'],
    [['files', 'data/a b.txt', 'content'], 'files["data/a b.txt"].content'],
    [['env_vars', '$X'], 'env_vars.$X'],
  ] as Array<[PropertyKey[], string]>)('%j → %s', (path, expected) => {
    expect(formatPath(path)).toBe(expected);
  });

  it('names unknown fields and the closest union alternative', () => {
    const result = BuildRequest.safeParse({
      name: 'x',
      template: 'basic',
      extra: 1,
      tools: [
        {
          name: 't',
          description: 'd',
          inputSchema: { type: 'object' },
          handler: { type: 'static', content: [{ type: 'text', text: 1 }] },
        },
      ],
    });
    expect(result.success).toBe(false);
    const paths = issuesToDetails(result.error!.issues).map((d) => d.path);
    expect(paths).toContain('extra');
    expect(paths).toContain('tools[0].handler.content[0].text');
  });
});

describe('Router', () => {
  const router = new Router<string>()
    .add('GET', '/v1/servers', 'list')
    .add('GET', '/v1/servers/:id', 'one')
    .add('POST', '/v1/deploy/:id/stop', 'stop');
  it.each([
    ['GET', '/v1/servers', { kind: 'found', route: 'list', params: {} }],
    ['GET', '/v1/servers/', { kind: 'found', route: 'list', params: {} }],
    ['HEAD', '/v1/servers', { kind: 'found', route: 'list', params: {} }],
    ['GET', '/v1/servers/mcp_a%20b', { kind: 'found', route: 'one', params: { id: 'mcp_a b' } }],
    ['POST', '/v1/deploy/deploy_x/stop', { kind: 'found', route: 'stop', params: { id: 'deploy_x' } }],
    ['GET', '/v1/deploy/deploy_x/stop', { kind: 'method_not_allowed', allow: ['POST'] }],
    ['DELETE', '/v1/servers/x', { kind: 'method_not_allowed', allow: ['GET', 'HEAD'] }],
    ['GET', '/v1/servers/%ZZ', { kind: 'not_found' }],
    ['GET', '/v1/servers//', { kind: 'not_found' }],
    ['GET', '/v1/nothing', { kind: 'not_found' }],
  ])('%s %s', (method, path, expected) => {
    const found = router.lookup(method, path);
    if (found.kind === 'found')
      expect({ kind: found.kind, route: found.match.route, params: found.match.params }).toEqual(expected);
    else expect(found).toEqual(expected);
  });
});

describe('RateLimiter', () => {
  it('lets a burst through, then refills at the rate, per key', () => {
    let now = 0;
    const limiter = new RateLimiter(3, 2, () => now);
    expect([1, 2, 3].map(() => limiter.take('a').allowed)).toEqual([true, true, true]);
    expect(limiter.take('a')).toEqual({ allowed: false, retryAfter: 1 });
    expect(limiter.take('b').allowed).toBe(true);
    now += 500;
    expect(limiter.take('a').allowed).toBe(true);
    expect(limiter.take('a').allowed).toBe(false);
  });

  it('is off at a rate of 0', () => {
    const limiter = new RateLimiter(1, 0);
    expect(Array.from({ length: 100 }, () => limiter.take('a').allowed).every(Boolean)).toBe(true);
  });
});

describe('limits', () => {
  it('reads MCPCTL_RATE_LIMIT', () => {
    expect(engineLimits({ env: {} })).toEqual(DEFAULT_LIMITS);
    expect(engineLimits({ env: { MCPCTL_RATE_LIMIT: '10' } })).toMatchObject({ ratePerSecond: 10, rateCapacity: 30 });
    expect(engineLimits({ env: { MCPCTL_RATE_LIMIT: '0' } }).ratePerSecond).toBe(0);
    expect(() => engineLimits({ env: { MCPCTL_RATE_LIMIT: 'fast' } })).toThrow(/MCPCTL_RATE_LIMIT/);
  });

  it('counts items and finds duplicate names', () => {
    const tool = { name: 'a', description: 'd', inputSchema: { type: 'object' as const } };
    expect(checkBuildLimits({ name: 'x', template: 'basic', tools: [tool, { ...tool, name: 'b' }] })).toEqual([]);
    expect(checkBuildLimits({ name: 'x', template: 'basic', tools: [tool, tool] })).toEqual([
      { path: 'tools[1]', message: 'the tool name "a" is already used by tools[0]' },
    ]);
  });
});

describe('bodies', () => {
  it.each([
    ['application/json', true],
    ['Application/JSON; charset=utf-8', true],
    ['application/merge-patch+json', true],
    ['text/plain', false],
    ['application/jsonx', false],
    [undefined, false],
  ])('%s is JSON: %s', (type, expected) => {
    expect(isJsonMediaType(type)).toBe(expected);
  });

  it.each([
    ['{}', 1, false],
    ['[[]]', 1, true],
    ['{"a":"[[[[[[[["}', 1, false],
    ['{"a":"\\"[[["}', 1, false],
    ['[[[1]]]', 3, false],
    ['[[[[1]]]]', 3, true],
  ])('%s deeper than %i: %s', (text, limit, expected) => {
    expect(exceedsDepth(text, limit)).toBe(expected);
  });
});

describe('homes and addresses', () => {
  it.each([
    [{ MCPCTL_HOME: '/srv/mcpctl' }, '/srv/mcpctl'],
    [{ MCPCTL_HOME: 'rel', XDG_STATE_HOME: '/x' }, '/work/rel'],
    [{ XDG_STATE_HOME: '/state', HOME: '/home/me' }, '/state/mcpctl'],
    [{ XDG_STATE_HOME: 'relative', HOME: '/home/me' }, '/home/me/.local/state/mcpctl'],
    [{ HOME: '/home/me' }, '/home/me/.local/state/mcpctl'],
  ])('%j → %s', (env, expected) => {
    expect(resolveHome(env, '/work')).toBe(expected);
  });

  it('names the files of a home', () => {
    expect(homePaths('/h')).toMatchObject({
      stateFile: '/h/engine.json',
      lockFile: '/h/engine.lock',
      logFile: '/h/engine.log',
      storeDir: '/h/store',
    });
  });

  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['localhost', true],
    ['::1', true],
    ['[::1]', true],
    ['0.0.0.0', false],
    ['::', false],
    ['192.168.1.4', false],
  ])('%s is loopback: %s', (host, expected) => {
    expect(isLoopback(host)).toBe(expected);
  });

  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['0.0.0.0', '127.0.0.1'],
    ['::', '[::1]'],
    ['::1', '[::1]'],
  ])('a URL for %s uses %s', (host, expected) => {
    expect(urlHost(host)).toBe(expected);
  });
});

describe('ids and tags', () => {
  it('makes ids of the documented forms', () => {
    expect(newId('mcp')).toMatch(/^mcp_[a-z0-9]{10}$/);
    expect(newId('deploy')).toMatch(/^deploy_[a-z0-9]{10}$/);
    expect(newId('req')).toMatch(/^req_[a-z0-9]{16}$/);
    expect(new Set(Array.from({ length: 1000 }, () => newId('req'))).size).toBe(1000);
  });

  it('gives a deployment the same ETag when only health-check times change', () => {
    const base = {
      deployment_id: 'deploy_a',
      status: 'deployed' as const,
      url: 'u',
      health_check: 'h',
      deploy_time: 1,
    };
    const a = etagOf({ ...base, instances: [{ id: 'i1', state: 'healthy', last_check: '2026-01-01T00:00:00Z' }] });
    const b = etagOf({ ...base, instances: [{ id: 'i1', state: 'healthy', last_check: '2026-01-01T00:00:05Z' }] });
    const c = etagOf({ ...base, instances: [{ id: 'i1', state: 'unhealthy', last_check: '2026-01-01T00:00:05Z' }] });
    expect(a).toBe(b);
    expect(a).not.toBe(c);
  });
});
