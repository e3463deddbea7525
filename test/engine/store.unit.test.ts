/** The file store: records survive a reopen, reads are copies, leftovers of a crash are handled. */
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../../src/engine/store/atomic.js';
import { FileStore, STORE_SCHEMA_VERSION, StoreOpenError } from '../../src/engine/store/file-store.js';
import type { DeploymentRecord, ServerRecord } from '../../src/engine/records.js';
import { tempHome } from '../support/app.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function storeDir(): Promise<string> {
  const home = await tempHome('mcpctl-store-');
  cleanups.push(() => home.cleanup());
  return join(home.dir, 'store');
}

async function open(dir: string, options: Partial<Parameters<typeof FileStore.open>[0]> = {}): Promise<FileStore> {
  const store = await FileStore.open({ dir, ...options });
  cleanups.push(() => store.close());
  return store;
}

function server(id: string, name = 'weather', createdAt = new Date().toISOString()): ServerRecord {
  return {
    server: {
      mcp_id: id,
      name,
      status: 'ready',
      url: `http://x/v1/servers/${id}`,
      build_time: 0.1,
      created_at: createdAt,
    },
    bundleDir: `/bundles/${id}`,
    digest: `digest-${id}`,
    definition: { name, template: 'basic' },
  };
}

function deployment(
  id: string,
  mcpId: string,
  environment: 'development' | 'staging',
  status: 'deployed' | 'stopped',
  createdAt: string,
): DeploymentRecord {
  return {
    deployment: {
      deployment_id: id,
      status,
      url: `http://x/d/${id}`,
      health_check: `http://x/d/${id}/health`,
      deploy_time: 1,
      environment,
      mcp_id: mcpId,
      created_at: createdAt,
    },
    mcpId,
    config: { env_vars: { TOKEN: 'secret' } },
    version: 1,
  };
}

describe('FileStore', () => {
  it('keeps servers, deployments and test runs across a reopen, newest first, filtered', async () => {
    const dir = await storeDir();
    const first = await FileStore.open({ dir });
    await first.putServer(server('mcp_a', 'alpha', '2026-01-01T00:00:00.000Z'));
    await first.putServer(server('mcp_b', 'beta', '2026-01-02T00:00:00.000Z'));
    await first.putDeployment(deployment('deploy_1', 'mcp_a', 'development', 'stopped', '2026-01-03T00:00:00.000Z'));
    await first.putDeployment(deployment('deploy_2', 'mcp_a', 'staging', 'deployed', '2026-01-04T00:00:00.000Z'));
    await first.putDeployment(deployment('deploy_3', 'mcp_b', 'development', 'deployed', '2026-01-05T00:00:00.000Z'));
    await first.putTestRun({
      id: 'test_1',
      mcpId: 'mcp_a',
      request: { mcp_id: 'mcp_a', message: 'hi', ai_model: 'mcpctl-local' },
      result: { ai_response: 'ok', tools_used: [], resources_accessed: [], execution_time: 0.1, success_rate: 1 },
      createdAt: '2026-01-06T00:00:00.000Z',
    });
    await first.close();

    const store = await open(dir);
    expect((await store.listServers()).map((r) => r.server.mcp_id)).toEqual(['mcp_b', 'mcp_a']);
    expect((await store.getServer('mcp_a'))?.definition.name).toBe('alpha');
    expect((await store.listServers({ digest: 'digest-mcp_b' })).map((r) => r.server.mcp_id)).toEqual(['mcp_b']);
    expect((await store.listServers({ name: 'alpha' })).map((r) => r.server.mcp_id)).toEqual(['mcp_a']);
    expect(await store.listServers({ name: 'alpha', digest: 'digest-mcp_b' })).toEqual([]);
    expect((await store.listDeployments()).map((r) => r.deployment.deployment_id)).toEqual([
      'deploy_3',
      'deploy_2',
      'deploy_1',
    ]);
    expect((await store.listDeployments({ mcpId: 'mcp_a' })).map((r) => r.deployment.deployment_id)).toEqual([
      'deploy_2',
      'deploy_1',
    ]);
    expect(
      (await store.listDeployments({ environment: 'development', status: 'deployed' })).map(
        (r) => r.deployment.deployment_id,
      ),
    ).toEqual(['deploy_3']);
    expect((await store.getDeployment('deploy_1'))?.config.env_vars).toEqual({ TOKEN: 'secret' });
    expect((await store.listTestRuns()).map((r) => r.id)).toEqual(['test_1']);
    expect(await store.getServer('mcp_none')).toBeUndefined();
  });

  it('returns exactly the deployments a filter asks for: by server name, ever deployed, the newest few', async () => {
    const store = await open(await storeDir());
    await store.putServer(server('mcp_a1', 'alpha'));
    await store.putServer(server('mcp_a2', 'alpha'));
    await store.putServer(server('mcp_b', 'beta'));
    const at = (day: number) => `2026-02-${String(day).padStart(2, '0')}T00:00:00.000Z`;
    const put = async (
      id: string,
      mcpId: string,
      day: number,
      everDeployed: boolean,
      environment: 'development' | 'staging' = 'development',
    ) => {
      const record = deployment(id, mcpId, environment, everDeployed ? 'stopped' : 'stopped', at(day));
      record.deployment.transitions = [
        { status: 'deploying', at: at(day) },
        ...(everDeployed ? [{ status: 'deployed' as const, at: at(day) }] : []),
        { status: everDeployed ? ('stopped' as const) : ('failed' as const), at: at(day) },
      ];
      await store.putDeployment(record);
    };
    await put('deploy_1', 'mcp_a1', 1, true);
    await put('deploy_2', 'mcp_b', 2, true);
    await put('deploy_3', 'mcp_a2', 3, true);
    await put('deploy_4', 'mcp_a2', 4, false);
    await put('deploy_5', 'mcp_a1', 5, true, 'staging');
    await put('deploy_6', 'mcp_gone', 6, true);
    const ids = async (filter: Parameters<FileStore['listDeployments']>[0]) =>
      (await store.listDeployments(filter)).map((r) => r.deployment.deployment_id);

    expect(await ids({ serverName: 'alpha' })).toEqual(['deploy_5', 'deploy_4', 'deploy_3', 'deploy_1']);
    expect(await ids({ serverName: 'alpha', environment: 'development' })).toEqual([
      'deploy_4',
      'deploy_3',
      'deploy_1',
    ]);
    expect(await ids({ serverName: 'alpha', environment: 'development', wasDeployed: true })).toEqual([
      'deploy_3',
      'deploy_1',
    ]);
    expect(await ids({ serverName: 'alpha', environment: 'development', wasDeployed: true, limit: 1 })).toEqual([
      'deploy_3',
    ]);
    expect(await ids({ wasDeployed: false })).toEqual(['deploy_4']);
    expect(await ids({ serverName: 'nobody' })).toEqual([]);
    expect(await ids({ limit: 0 })).toEqual([]);
    expect(await ids({ limit: 2 })).toEqual(['deploy_6', 'deploy_5']);
    // what comes back is a copy
    const [first] = await store.listDeployments({ serverName: 'beta' });
    first!.deployment.status = 'failed';
    expect((await store.getDeployment('deploy_2'))!.deployment.status).toBe('stopped');
  });

  it('hands out copies: changing a returned record does not change the store', async () => {
    const store = await open(await storeDir());
    await store.putServer(server('mcp_a'));
    const copy = (await store.getServer('mcp_a'))!;
    copy.server.name = 'changed';
    expect((await store.getServer('mcp_a'))!.server.name).toBe('weather');
  });

  it('writes files readable only by their owner, in a versioned layout', async () => {
    const dir = await storeDir();
    const store = await open(dir);
    await store.putServer(server('mcp_a'));
    const file = join(dir, 'servers', 'mcp_a.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const content = JSON.parse(await readFile(file, 'utf8'));
    expect(content.schema_version).toBe(STORE_SCHEMA_VERSION);
    expect(content.record.server.mcp_id).toBe('mcp_a');
    expect(JSON.parse(await readFile(join(dir, 'meta.json'), 'utf8')).schema_version).toBe(STORE_SCHEMA_VERSION);
  });

  it('removes unfinished writes and moves unreadable records aside, keeping the rest', async () => {
    const dir = await storeDir();
    const first = await FileStore.open({ dir });
    await first.putServer(server('mcp_a'));
    await first.close();
    await writeFile(join(dir, 'servers', '.mcp_b.json.123.abcd.tmp'), '{"schema_version":1,"rec');
    await writeFile(join(dir, 'servers', 'mcp_c.json'), 'not json at all');
    const store = await open(dir);
    expect((await store.listServers()).map((r) => r.server.mcp_id)).toEqual(['mcp_a']);
    expect(await readdir(join(dir, 'servers'))).toEqual(['mcp_a.json']);
    expect((await readdir(join(dir, 'unreadable'))).some((name) => name.endsWith('mcp_c.json'))).toBe(true);
  });

  it('refuses a store written by a newer layout, saying what to do', async () => {
    const dir = await storeDir();
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'meta.json'), JSON.stringify({ schema_version: STORE_SCHEMA_VERSION + 1 }));
    await expect(FileStore.open({ dir })).rejects.toThrow(StoreOpenError);
    await expect(FileStore.open({ dir })).rejects.toThrow(/newer mcpctl.*MCPCTL_HOME/);
  });

  it('keeps concurrent writes of one record in order: the last write wins', async () => {
    const dir = await storeDir();
    const store = await open(dir);
    await Promise.all(Array.from({ length: 50 }, (_, i) => store.putServer(server('mcp_a', `name${i}`))));
    expect((await store.getServer('mcp_a'))!.server.name).toBe('name49');
    const reopened = await open(dir);
    expect((await reopened.getServer('mcp_a'))!.server.name).toBe('name49');
  });

  it('rejects ids that are not safe file names, and writes after close', async () => {
    const store = await open(await storeDir());
    await expect(store.putServer(server('../escape'))).rejects.toThrow(/not a valid record id/);
    await store.close();
    await expect(store.putServer(server('mcp_a'))).rejects.toThrow(/closed/);
  });
});

describe('writeFileAtomic', () => {
  it('replaces the content whole and sets the exact mode despite the umask', async () => {
    const dir = await storeDir();
    await mkdir(dir, { recursive: true });
    const file = join(dir, 'state.json');
    await writeFileAtomic(file, 'one', { mode: 0o600 });
    await writeFileAtomic(file, 'two', { mode: 0o600 });
    expect(await readFile(file, 'utf8')).toBe('two');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readdir(dir)).toEqual(['state.json']);
  });
});

describe('removal', () => {
  it('forgets a server and a deployment, and they stay gone after a reopen', async () => {
    const dir = await storeDir();
    const store = await open(dir);
    await store.putServer(server('mcp_a'));
    await store.putDeployment(deployment('deploy_a', 'mcp_a', 'development', 'stopped', new Date().toISOString()));
    expect(await store.deleteDeployment('deploy_a')).toBe(true);
    expect(await store.deleteServer('mcp_a')).toBe(true);
    expect(await store.deleteServer('mcp_a')).toBe(false);
    expect(await store.listDeployments()).toEqual([]);
    await store.close();
    const reopened = await open(dir);
    expect(await reopened.getServer('mcp_a')).toBeUndefined();
    expect(await reopened.getDeployment('deploy_a')).toBeUndefined();
    expect(await readdir(join(dir, 'deployments'))).toEqual([]);
  });
});
