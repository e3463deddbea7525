/** The folder of files moved aside read back as a list: what each held, when, why, where it goes back. */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listUnreadable, moveAside } from '../../src/engine/store/unreadable.js';
import { tempHome } from '../support/app.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function storeDir(): Promise<string> {
  const home = await tempHome('mcpctl-unreadable-');
  cleanups.push(() => home.cleanup());
  return join(home.dir, 'store');
}

describe('listUnreadable', () => {
  it('is empty when nothing was moved aside', async () => {
    expect(await listUnreadable(await storeDir())).toEqual([]);
  });

  it('names each file moved aside, with why for those this engine moved and where each goes back', async () => {
    const dir = await storeDir();
    await mkdir(join(dir, 'deployments'), { recursive: true });
    await writeFile(join(dir, 'deployments', 'deploy_a.json'), '{"sch');
    await moveAside(dir, 'deployments', 'deploy_a.json', new Error('Unexpected end of JSON input'), 1_764_000_000_000);
    // one from an earlier run, and one put there by hand
    await writeFile(join(dir, 'unreadable', 'alerts-1763000000000.json'), '');
    await writeFile(join(dir, 'unreadable', 'notes.txt'), '');
    expect(await listUnreadable(dir)).toEqual([
      { file: join(dir, 'unreadable', 'notes.txt'), kind: 'unknown' },
      {
        file: join(dir, 'unreadable', 'alerts-1763000000000.json'),
        kind: 'alerts',
        moved_at: new Date(1_763_000_000_000).toISOString(),
        restore_to: join(dir, 'alerts', 'state.json'),
      },
      {
        file: join(dir, 'unreadable', 'deployments-1764000000000-deploy_a.json'),
        kind: 'deployment',
        moved_at: new Date(1_764_000_000_000).toISOString(),
        reason: 'Unexpected end of JSON input',
        restore_to: join(dir, 'deployments', 'deploy_a.json'),
      },
    ]);
  });
});
