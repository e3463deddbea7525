/**
 * A test service over a real bundle: a definition file is bundled into a temp folder, and the
 * service starts the real runtime for each test (through the built serve-bundle). Every runtime
 * it starts is remembered, so tests can check that each one stopped.
 */
import { join } from 'node:path';
import type { BuildRequest } from '../../src/api/contract.js';
import { toBuildRequest } from '../../src/api/build-request.js';
import { loadDefinition } from '../../src/definition/load.js';
import { createTestService, type TestServiceDeps } from '../../src/engine/agent/test-service.js';
import { createLogger } from '../../src/engine/engine-log.js';
import type { RuntimeProcessHandle, TestService } from '../../src/engine/services.js';
import type { ServerRecord } from '../../src/engine/records.js';
import { writeBundle } from '../../src/runtime/host/bundle.js';
import { startRuntimeProcess } from '../../src/runtime/host/process.js';
import { tempDir } from './temp.js';

export interface Harness {
  service: TestService;
  record(file: string): Promise<ServerRecord>;
  /** every runtime the service started */
  started: RuntimeProcessHandle[];
  /** the pids of those that exited */
  exited: Set<number>;
  logs: string[];
  close(): Promise<void>;
}

export interface HarnessOptions extends Partial<Omit<TestServiceDeps, 'startRuntime' | 'logger'>> {
  /** variables added to the runtime's environment (stand-in API addresses) */
  runtimeEnv?: Record<string, string>;
  /** the `egress` every recorded definition gets (stand-in APIs on loopback need allow_private) */
  egress?: BuildRequest['egress'];
}

export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
  const temp = await tempDir('mcpctl-agent-');
  const dir = temp.dir;
  const started: RuntimeProcessHandle[] = [];
  const exited = new Set<number>();
  const logs: string[] = [];
  const { runtimeEnv, egress, ...deps } = options;
  const service = createTestService({
    env: {},
    version: '0.0.0-test',
    providerRetries: 0,
    ...deps,
    logger: createLogger({ write: (line) => logs.push(line), level: 'debug' }),
    startRuntime: async (start) => {
      const child = await startRuntimeProcess({ ...start, env: { ...start.env, ...runtimeEnv } });
      started.push(child);
      void child.exited.then(() => exited.add(child.pid));
      return child;
    },
  });
  let count = 0;
  return {
    service,
    started,
    exited,
    logs,
    async record(file) {
      const request = (await toBuildRequest(await loadDefinition(file))) as BuildRequest;
      if (egress !== undefined) request.egress = egress;
      const bundle = await writeBundle(request, join(dir, 'bundles'));
      const { files: _files, ...definition } = request;
      count += 1;
      return {
        server: {
          mcp_id: `mcp_test${count}`,
          name: request.name,
          status: 'ready',
          url: `http://127.0.0.1/v1/servers/mcp_test${count}`,
          build_time: 0,
        },
        bundleDir: bundle.dir,
        digest: bundle.digest,
        definition,
      };
    },
    async close() {
      // runs answer before their instance is gone: the service's close waits for those
      await service.close?.();
      await Promise.all(started.map((child) => child.stop(1_000)));
      await temp.cleanup();
    },
  };
}
