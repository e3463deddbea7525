/**
 * `resources` on the process runner: where the engine may write control groups (it runs as root
 * on Linux), each limited instance is in a group of its own with the deployment's memory and CPU
 * limits, and an instance that takes more memory than it was given is ended by the kernel (and
 * replaced by the supervisor) instead of taking the machine's. Where it may not, Node's heap size
 * is all that holds, and the deployment's notices say so. Real engine and runtime.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../../../src/api/client.js';
import type { BuildRequestInput } from '../../../../src/api/contract.js';
import { findCgroupLimiter } from '../../../../src/runtime/host/cgroup-limits.js';
import { requireBuilt, waitFor } from '../../../support/app.js';
import { realEnginePerTest } from '../../../support/engine.js';

beforeAll(() => requireBuilt());

const API_KEY = 'limits-test-key-0123456789abcdef0123';
const canLimit = findCgroupLimiter('/limits-probe').limiter;

const HOG: BuildRequestInput = {
  name: 'hog',
  template: 'custom',
  tools: [
    {
      name: 'hog',
      description: 'Takes memory',
      inputSchema: { type: 'object' },
      handler: { type: 'module', module: 'hog.mjs', export: 'hog' },
    },
    {
      name: 'ping',
      description: 'Answers',
      inputSchema: { type: 'object' },
      handler: { type: 'static', content: [{ type: 'text', text: 'pong' }] },
    },
  ],
  files: {
    'hog.mjs': {
      encoding: 'utf8',
      content:
        "const kept = [];\nexport const hog = () => { for (let i = 0; i < 400; i += 1) kept.push(Buffer.alloc(1024 * 1024, 1)); return 'survived ' + kept.length; };\n",
    },
  },
};

const engines = realEnginePerTest(API_KEY);

/** The control group path of a process for one controller (cgroup v1) or the unified one (v2). */
async function groupOf(pid: number, controller: string): Promise<string | undefined> {
  const lines = (await readFile(`/proc/${pid}/cgroup`, 'utf8')).split('\n');
  const line =
    lines.find((entry) => entry.split(':')[1]?.split(',').includes(controller)) ??
    lines.find((entry) => entry.startsWith('0::'));
  return line?.split(':')[2];
}

describe.skipIf(canLimit === undefined)('resources on the process runner', () => {
  it('puts each instance in a group with its limits, and the kernel ends one that takes more memory than it was given', async () => {
    const { engine } = await engines.start();
    const api = new ApiClient({ baseUrl: engine.url, apiKey: API_KEY });
    try {
      const server = await api.build(HOG);
      const { deployment } = await api.deploy({
        mcp_id: server.mcp_id,
        environment: 'development',
        config: { resources: { memory_mb: 96, cpus: 0.5 } },
      });
      expect(deployment.status).toBe('deployed');
      expect(deployment.notices ?? []).not.toContainEqual(expect.stringContaining('resources'));
      const live = await api.status(deployment.deployment_id);
      const pid = live.deployment?.instances?.[0]?.pid;
      expect(pid).toBeGreaterThan(0);

      const v1 = canLimit!.version === 1;
      const memoryGroup = join('/sys/fs/cgroup', v1 ? 'memory' : '', (await groupOf(pid!, 'memory'))!);
      expect(memoryGroup).toMatch(/mcpctl-[0-9a-f]{12}\/[0-9a-f]{12}$/);
      const memoryLimit = await readFile(join(memoryGroup, v1 ? 'memory.limit_in_bytes' : 'memory.max'), 'utf8');
      expect(Number(memoryLimit.trim())).toBe(96 * 1024 * 1024);
      const cpuGroup = join('/sys/fs/cgroup', v1 ? 'cpu' : '', (await groupOf(pid!, 'cpu'))!);
      const cpu = v1
        ? await readFile(join(cpuGroup, 'cpu.cfs_quota_us'), 'utf8')
        : await readFile(join(cpuGroup, 'cpu.max'), 'utf8');
      expect(cpu.trim().split(' ')[0]).toBe('50000');

      const client = new Client({ name: 'limits-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${deployment.url}/mcp`)));
      const outcome = await client.callTool({ name: 'hog', arguments: {} }).then(
        (answer) => JSON.stringify(answer),
        (error: unknown) => `failed: ${String(error)}`,
      );
      expect(outcome).not.toContain('survived 400');
      await client.close().catch(() => {});
      // the supervisor replaces the instance the kernel ended
      await waitFor('a new instance', async () => {
        const now = await api.status(deployment.deployment_id);
        const next = now.deployment?.instances?.find(
          (instance) => instance.pid !== pid && instance.state === 'healthy',
        );
        return next;
      });
    } finally {
      await api.close();
    }
  });
});
