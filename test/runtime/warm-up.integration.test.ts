/**
 * The warm-up of a warm runtime process (src/runtime/host/warm-up.ts): it serves its throwaway
 * definition once over loopback and leaves nothing behind: no socket, no timer, no change to the
 * environment, nothing on stdout. And a warm process that did it still serves its one bundle.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { spawnWarmRuntimeProcess } from '../../src/runtime/host/process.js';
import { warmUp } from '../../src/runtime/host/warm-up.js';
import { FIXTURES, bundleDefinition, connect, makeTempDir } from '../support/runtime.js';
import { eventually } from '../support/wait.js';

let temp: Awaited<ReturnType<typeof makeTempDir>>;
let bundleDir: string;

beforeAll(async () => {
  temp = await makeTempDir();
  ({ dir: bundleDir } = await bundleDefinition(join(FIXTURES, 'slow', 'server.yaml'), join(temp.path, 'bundles')));
});

afterAll(async () => {
  await temp?.[Symbol.asyncDispose]();
});

/** What keeps the event loop busy (sockets, servers, timers), counted by kind. */
function resources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/** The kinds of which there are more now than in `before`. */
function added(before: Map<string, number>): string[] {
  return [...resources()].filter(([kind, count]) => count > (before.get(kind) ?? 0)).map(([kind]) => kind);
}

describe('the warm-up of a warm process', () => {
  it('talks MCP to its throwaway server, then leaves no socket, timer or environment change behind', async () => {
    const env = { ...process.env };
    const before = resources();
    const writes = vi.spyOn(process.stdout, 'write');
    let worked: boolean;
    try {
      worked = await warmUp();
    } finally {
      writes.mockRestore();
    }
    expect(worked).toBe(true);
    expect(writes).not.toHaveBeenCalled();
    expect(process.env).toEqual(env);
    // closed sockets are let go on the next turns of the loop
    await eventually(async () => expect(added(before)).toEqual([]), 1_000);
    expect([...resources().keys()].filter((kind) => kind.startsWith('TCP'))).toEqual([]);
  });

  it('a warm process that warmed up still serves the bundle it is given', async () => {
    const warm = spawnWarmRuntimeProcess({});
    await warm.ready;
    await using runtime = await warm.serve({ bundleDir, env: { SLOW_API_KEY: 'key-12345' } });
    await using client = await connect(runtime.mcpUrl);
    const tools = await client.listTools();
    expect(tools.tools.map((tool) => tool.name).sort()).toEqual(['keyed', 'wait']);
  });
});
