import { describe, expect, it } from 'vitest';
import type { Deployment } from '../../src/api/contract.js';
import { describeAuth, describeProgress } from '../../src/cli/render/deployment.js';

const base = {
  deployment_id: 'deploy_abc',
  status: 'deployed',
  url: 'http://127.0.0.1:1/d/deploy_abc',
  deploy_time: 1,
  health_check: 'x',
} as Deployment;

describe('the auth row of a deployment', () => {
  it.each([
    [undefined, undefined],
    [
      { type: 'oauth', resource_metadata: 'http://h/.well-known/oauth-protected-resource/mcp' },
      'oauth · metadata http://h/.well-known/oauth-protected-resource/mcp',
    ],
    [{ type: 'oauth' }, 'oauth'],
    [{ type: 'bearer' }, 'bearer token'],
    [{ type: 'none' }, 'none (public)'],
  ] as const)('%j → %s', (auth, shown) => {
    expect(describeAuth(auth === undefined ? base : { ...base, auth })).toBe(shown);
  });
});

describe('an idle deployment (scale to zero)', () => {
  it('reads as idle, not as 0 of 1 healthy', () => {
    const idle = { ...base, idle: true, stage: 'idle', desired_instances: 1, instances: [] } as Deployment;
    expect(describeProgress(idle)).toBe('deployed deploy_abc: idle, wakes on request');
    const awake = { ...base, desired_instances: 1, instances: [{ id: 'i1', state: 'healthy' }] } as Deployment;
    expect(describeProgress(awake)).toBe('deployed deploy_abc (1/1 healthy)');
  });
});
