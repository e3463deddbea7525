import { describe, expect, it } from 'vitest';
import { loginCode, parseRoute, routeHref, toolHref, type Route } from '../../src/ui/route.js';

describe('the dashboard routes', () => {
  it.each<[string, Route]>([
    ['', { page: 'deployments' }],
    ['#', { page: 'deployments' }],
    ['#/', { page: 'deployments' }],
    ['#code=abc', { page: 'deployments' }],
    ['#/d/deploy_9x2m4k7q1c', { page: 'deployment', id: 'deploy_9x2m4k7q1c' }],
    ['#/d/deploy_9x2m4k7q1c/', { page: 'deployment', id: 'deploy_9x2m4k7q1c' }],
    ['#/tests', { page: 'tests' }],
    ['#/tests/test_abc123', { page: 'test', id: 'test_abc123' }],
    ['#/alerts', { page: 'alerts' }],
    ['#/d/', { page: 'not-found', path: '/d/' }],
    ['#/d/a/b', { page: 'not-found', path: '/d/a/b' }],
    ['#/d/%3Cscript%3E', { page: 'not-found', path: '/d/%3Cscript%3E' }],
    ['#/elsewhere', { page: 'not-found', path: '/elsewhere' }],
  ])('%s is %o', (hash, route) => {
    expect(parseRoute(hash)).toEqual(route);
  });

  it('links back to the same routes', () => {
    const routes: Route[] = [
      { page: 'deployments' },
      { page: 'deployment', id: 'deploy_1' },
      { page: 'tests' },
      { page: 'test', id: 'test_1' },
      { page: 'alerts' },
    ];
    for (const route of routes) expect(parseRoute(routeHref(route))).toEqual(route);
  });

  it('reads the one-time code of a log-in link, and nothing else', () => {
    expect(loginCode('#code=Ab3_-x')).toBe('Ab3_-x');
    expect(loginCode('#/')).toBeUndefined();
    expect(loginCode('#code=')).toBeUndefined();
    expect(loginCode('#code=a&x=1')).toBeUndefined();
  });
});

describe('the server page routes', () => {
  it.each<[string, Route]>([
    ['#/servers/mcp_4k2j9x7q1m', { page: 'server', id: 'mcp_4k2j9x7q1m' }],
    ['#/servers/mcp_4k2j9x7q1m/', { page: 'server', id: 'mcp_4k2j9x7q1m' }],
    ['#/servers/mcp_4k2j9x7q1m/tools/get_forecast', { page: 'server', id: 'mcp_4k2j9x7q1m', tool: 'get_forecast' }],
    ['#/servers/mcp_1/tools/find-location', { page: 'server', id: 'mcp_1', tool: 'find-location' }],
    ['#/servers', { page: 'not-found', path: '/servers' }],
    ['#/servers/mcp_1/tools', { page: 'not-found', path: '/servers/mcp_1/tools' }],
    ['#/servers/mcp_1/prompts/plan', { page: 'not-found', path: '/servers/mcp_1/prompts/plan' }],
    ['#/servers/mcp_1/tools/a/b', { page: 'not-found', path: '/servers/mcp_1/tools/a/b' }],
    ['#/servers/mcp_1/tools/%3Cimg%3E', { page: 'not-found', path: '/servers/mcp_1/tools/%3Cimg%3E' }],
    ['#/servers/mcp_1/tools/a.b', { page: 'not-found', path: '/servers/mcp_1/tools/a.b' }],
    ['#/servers/%3Cscript%3E', { page: 'not-found', path: '/servers/%3Cscript%3E' }],
  ])('%s is %o', (hash, route) => {
    expect(parseRoute(hash)).toEqual(route);
  });

  it('links to a server and to one of its tools, and back to the same routes', () => {
    const routes: Route[] = [
      { page: 'server', id: 'mcp_1' },
      { page: 'server', id: 'mcp_1', tool: 'get_forecast' },
    ];
    for (const route of routes) expect(parseRoute(routeHref(route))).toEqual(route);
    expect(toolHref('mcp_1', 'get_forecast')).toBe('#/servers/mcp_1/tools/get_forecast');
  });

  it('makes no link for a tool name or server id no definition may have', () => {
    expect(toolHref('mcp_1', 'a b')).toBeUndefined();
    expect(toolHref('mcp_1', '<img src=x>')).toBeUndefined();
    expect(toolHref('mcp_1', 'x'.repeat(65))).toBeUndefined();
    expect(toolHref('', 'get_forecast')).toBeUndefined();
    expect(toolHref('../d', 'get_forecast')).toBeUndefined();
  });
});
