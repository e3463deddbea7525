import { describe, expect, it } from 'vitest';
import { loginCode, parseRoute, routeHref, type Route } from '../../src/ui/route.js';

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
