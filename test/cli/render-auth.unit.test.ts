import { describe, expect, it } from 'vitest';
import type { Deployment } from '../../src/api/contract.js';
import { describeAuth } from '../../src/cli/render/deployment.js';

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
