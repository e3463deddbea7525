/**
 * The runtime: a definition becomes an MCP server, in three stages. Compile (`compile.ts`) turns
 * the definition into tools, resources and prompts once, before the first request; serve
 * (`serve.ts`) answers `/mcp` (Streamable HTTP: stateless, or a session per client with
 * `sessions: true`) and `/health`, and feeds stdio connections through `createServer()`; reload
 * (`reload.ts`) lets a newer runtime take over the sessions and connections of the one it
 * replaces. `mcpctl dev` and `serve-bundle` share it.
 */
import { HEALTH_PATH, MCP_PATH, USER_ID_HEADER, USER_ID_META_KEY } from '../constants.js';
import { compileDefinition, DEFAULT_VERSION } from './compile.js';
import type { HealthBody } from './http-front.js';
import { userIdOf } from './operations.js';
import { adopt, registerSuccession } from './reload.js';
import type { Runtime, RuntimeDefinition, RuntimeOptions } from './runtime-types.js';
import { createServing, type Serving } from './serve.js';
import { RuntimeStartError } from './start-error.js';

export { HEALTH_PATH, MCP_PATH, USER_ID_HEADER, USER_ID_META_KEY, DEFAULT_VERSION, RuntimeStartError, userIdOf };
export type { HealthBody };
export type { CreateServerOptions, Runtime, RuntimeDefinition, RuntimeOptions } from './runtime-types.js';

export async function createRuntime(definition: RuntimeDefinition, options: RuntimeOptions): Promise<Runtime> {
  const started = Date.now();
  const compiled = await compileDefinition(definition, options);
  const serving = createServing(compiled, options, started);
  const { front, store } = serving;
  const self: Runtime = {
    name: compiled.serverInfo.name,
    version: compiled.serverInfo.version,
    counts: compiled.counts,
    sessions: store !== undefined,
    handler: front.handler,
    createServer: (serverOptions = {}) => serving.connectServer(serverOptions),
    health: () => serving.health(front.draining),
    get inFlight() {
      return front.inFlight;
    },
    drain: (timeoutMs) => drain(serving, timeoutMs),
    async close() {
      void front.drain(0);
      await store?.close();
      serving.succession.ops.subscribers.close();
      await serving.closeMcp();
      await compiled.egress.close();
    },
  };
  registerSuccession(self, serving.succession);
  if (options.adopt !== undefined) adopt(self, options.adopt);
  return self;
}

async function drain({ front, store }: Serving, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  const idle = await front.drain(timeoutMs);
  if (store === undefined) return idle;
  // sessions end by DELETE or when idle; until then (or the time-out) they are still served
  while (store.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  return store.size === 0 && front.inFlight === 0;
}
