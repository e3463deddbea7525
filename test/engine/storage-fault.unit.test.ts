/**
 * A write the engine's disk refuses (no space, a quota, a read-only file system) is the engine's
 * problem: the store and the builder say which file, and the API answers `storage_full` or
 * `storage_unwritable`, never a definition's `build_failed`. The failures are injected where the
 * write happens (node:fs/promises), so no disk has to be filled.
 */
import type * as FsPromises from 'node:fs/promises';
import type * as Atomic from '../../src/engine/store/atomic.js';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createBuilder, type RuntimeModules } from '../../src/engine/builder.js';
import { silentLogger } from '../../src/engine/engine-log.js';
import { ServiceError, storageServiceError } from '../../src/engine/service-error.js';
import { FileStore } from '../../src/engine/store/file-store.js';
import { storageFaultOf } from '../../src/engine/store/storage-fault.js';
import { tempHome, weatherDefinition } from '../support/app.js';

/** When set, the next `open` for writing fails with this code, as the system would. */
const failing = vi.hoisted(() => ({ code: undefined as string | undefined }));

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof FsPromises>();
  const open: typeof actual.open = async (path, flags, mode) => {
    if (failing.code !== undefined && typeof flags === 'string' && flags.includes('w')) {
      throw Object.assign(new Error(`${failing.code}: cannot write, open '${String(path)}'`), {
        code: failing.code,
        syscall: 'open',
        path: String(path),
      });
    }
    return actual.open(path, flags, mode);
  };
  return { ...actual, open, default: { ...actual, open } };
});

function errno(code: string, syscall: string, path = '/home/u/.mcpctl/bundles/x'): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${syscall} '${path}'`), { code, syscall, path });
}

const cleanups: Array<() => Promise<void>> = [];
beforeEach(() => {
  failing.code = undefined;
});
afterEach(async () => {
  failing.code = undefined;
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function home(): Promise<string> {
  const dir = await tempHome('mcpctl-storage-');
  cleanups.push(() => dir.cleanup());
  return dir.dir;
}

describe('storageFaultOf', () => {
  it.each([
    ['ENOSPC', 'write', 'full'],
    ['EDQUOT', 'open', 'full'],
    ['EROFS', 'mkdir', 'unwritable'],
    ['EACCES', 'open', 'unwritable'],
    ['EPERM', 'rename', 'unwritable'],
  ])('%s in %s is a %s disk', (code, syscall, kind) => {
    expect(storageFaultOf(errno(code, syscall))).toEqual({
      kind,
      errno: code,
      path: '/home/u/.mcpctl/bundles/x',
    });
  });

  it('is found as the cause of another error', () => {
    expect(storageFaultOf(new Error('bundle', { cause: errno('ENOSPC', 'write') }))?.kind).toBe('full');
  });

  it('a denied spawn or listen, or any other error, is not about the disk', () => {
    expect(storageFaultOf(errno('EACCES', 'spawn'))).toBeUndefined();
    expect(storageFaultOf(errno('EACCES', 'listen'))).toBeUndefined();
    expect(storageFaultOf(errno('ENOENT', 'open'))).toBeUndefined();
    expect(storageFaultOf(new Error('no'))).toBeUndefined();
    expect(storageFaultOf('ENOSPC')).toBeUndefined();
  });
});

describe('a full disk under the store', () => {
  // Unit files share their worker's modules: the store's modules are loaded afresh here, so that
  // they see the mocked node:fs/promises even when another file loaded them first.
  let writeFileAtomic: typeof Atomic.writeFileAtomic;
  let Store: typeof FileStore;
  beforeAll(async () => {
    vi.resetModules();
    ({ writeFileAtomic } = await import('../../src/engine/store/atomic.js'));
    ({ FileStore: Store } = await import('../../src/engine/store/file-store.js'));
  });

  it('an atomic write names the file it was for and leaves nothing behind', async () => {
    const dir = await home();
    const target = join(dir, 'record.json');
    failing.code = 'ENOSPC';
    const error = await writeFileAtomic(target, '{}').catch((e: unknown) => e);
    expect(storageFaultOf(error)).toEqual({ kind: 'full', errno: 'ENOSPC', path: target });
    expect(await readdir(dir)).toEqual([]);
  });

  it('a record the store cannot save is answered as storage_full, naming its file', async () => {
    const dir = join(await home(), 'store');
    const store = await Store.open({ dir });
    cleanups.push(() => store.close());
    failing.code = 'ENOSPC';
    const error = await store.putServer({ server: { mcp_id: 'mcp_full' } } as never).catch((e: unknown) => e);
    const answer = storageServiceError(error);
    expect(answer?.code).toBe('storage_full');
    expect(answer?.message).toBe(
      `the engine could not write ${join(dir, 'servers', 'mcp_full.json')}: no space is left on its disk (ENOSPC)`,
    );
    expect(await store.getServer('mcp_full')).toBeUndefined();
  });

  it('a read-only store is storage_unwritable', () => {
    const answer = storageServiceError(errno('EROFS', 'open', '/srv/mcpctl/store/deployments/d.json'));
    expect(answer?.code).toBe('storage_unwritable');
    expect(answer?.message).toContain('the file system is read-only (EROFS)');
  });
});

describe('a build on a full disk', () => {
  async function buildWith(writeBundle: RuntimeModules['writeBundle']): Promise<unknown> {
    const dir = await home();
    const store = await FileStore.open({ dir: join(dir, 'store') });
    cleanups.push(() => store.close());
    const runtime: RuntimeModules = {
      writeBundle,
      startRuntimeProcess: () => Promise.reject(new Error('not started in this test')),
    };
    const builder = createBuilder({
      store,
      bundlesDir: join(dir, 'bundles'),
      baseUrl: 'http://127.0.0.1:1',
      version: '0.0.0-test',
      logger: silentLogger,
      runtime: async () => runtime,
    });
    cleanups.push(() => builder.close());
    return builder.build(weatherDefinition()).catch((e: unknown) => e);
  }

  it('is the engine’s storage_full, not the definition’s build_failed', async () => {
    const error = await buildWith(() => Promise.reject(errno('ENOSPC', 'write', '/h/bundles/.tmp-1/server.json')));
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).code).toBe('storage_full');
    expect((error as ServiceError).message).toBe(
      'the engine could not write /h/bundles/.tmp-1/server.json: no space is left on its disk (ENOSPC)',
    );
  });

  it('a bundle that fails for another reason is still the build’s failure', async () => {
    const error = await buildWith(() => Promise.reject(new Error('a file of the definition is not valid UTF-8')));
    expect((error as ServiceError).code).toBe('build_failed');
  });
});
