/**
 * Through the engine's HTTP layer: a write the disk refuses, wherever it happens on a request, is
 * answered 507 `storage_full` (or `storage_unwritable`), not a 500 that hides it; and /v1/health
 * lists the store's files moved aside.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp, weatherDefinition } from '../support/app.js';

const apps: TestApp[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

function errno(code: string, path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: write '${path}'`), { code, syscall: 'write', path });
}

describe('a write the engine’s disk refused', () => {
  it.each([
    ['ENOSPC', 'storage_full', 'no space is left on its disk (ENOSPC)'],
    ['EROFS', 'storage_unwritable', 'the file system is read-only (EROFS)'],
  ])('%s is answered 507 %s, naming the file', async (code, answerCode, why) => {
    const path = '/srv/mcpctl/store/servers/mcp_x.json';
    const app = await startTestApp({
      builds: { build: () => Promise.reject(errno(code, path)) },
    });
    apps.push(app);
    const answer = await call(app.url, 'POST', '/v1/build', { json: weatherDefinition() });
    expect(answer.status).toBe(507);
    expect(answer.body.error).toMatchObject({
      code: answerCode,
      message: `the engine could not write ${path}: ${why}`,
    });
  });
});

describe('GET /v1/health', () => {
  it('lists the files moved aside, and nothing when there are none', async () => {
    const files = [
      {
        file: '/h/store/unreadable/deployments-1764000000000-deploy_a.json',
        kind: 'deployment',
        moved_at: '2025-11-24T16:00:00.000Z',
        restore_to: '/h/store/deployments/deploy_a.json',
      },
    ];
    const app = await startTestApp({ unreadable: async () => files });
    apps.push(app);
    expect((await call(app.url, 'GET', '/v1/health')).body.data.unreadable_records).toEqual(files);
    const bare = await startTestApp();
    apps.push(bare);
    expect((await call(bare.url, 'GET', '/v1/health')).body.data).not.toHaveProperty('unreadable_records');
  });
});
