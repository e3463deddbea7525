/**
 * The engine's TestService: for each POST /v1/test, a fresh instance of the built server on
 * 127.0.0.1, an MCP session to it (as the test's user), the chosen agent's run within the
 * limits, and the test result. The instance always stops afterwards.
 */
import { DEFAULT_AI_MODEL, type ModelStatus, type TestRequest, type TestResult } from '../../api/contract.js';
import { computeGuidance } from '../../api/guidance.js';
import { findModel, MODELS, type ModelInfo } from '../../shared/models.js';
import { placeholderEnv } from '../builder.js';
import { createLocalCredentials, type LocalCredentials } from '../local-credentials.js';
import { ServiceError } from '../service-error.js';
import type { Logger } from '../engine-log.js';
import type { ServerRecord } from '../records.js';
import type { StartRuntimeProcess, TestService } from '../services.js';
import { DEFAULT_AGENT_LIMITS, type Agent, type AgentLimits } from './agent-types.js';
import type * as SessionModule from './session.js';

export interface TestServiceDeps {
  /** the engine's environment: provider keys and base URLs */
  env: Record<string, string | undefined>;
  logger: Logger;
  startRuntime: StartRuntimeProcess;
  /** the engine's version, sent as the MCP client's version */
  version: string;
  clock?: () => number;
  limits?: Partial<AgentLimits>;
  /** retries of a provider request that failed with 429, 5xx or no connection; default 2 */
  providerRetries?: number;
  /** how a test calls a server with `auth` (the engine's own key); default: a key of the service's own */
  localCredentials?: LocalCredentials;
  /** when to load the MCP client and the offline agent in the background; default 1.5 s after creation */
  preloadAfterMs?: number;
}

export function createTestService(deps: TestServiceDeps): TestService {
  const clock = deps.clock ?? Date.now;
  const limits: AgentLimits = { ...DEFAULT_AGENT_LIMITS, ...deps.limits };
  const log = deps.logger;
  const localCredentials = deps.localCredentials ?? createLocalCredentials(clock);
  /** the instances of finished runs, being stopped */
  const stopping = new Set<Promise<void>>();
  let closed = false;
  // What the first run would load (the MCP client, the offline agent) is loaded once the engine
  // has had a moment to start: in the background, so that the first test does not pay for it.
  setTimeout(() => {
    if (!closed) void preload().catch(() => undefined);
  }, deps.preloadAfterMs ?? 1_500).unref();

  const test = async (server: ServerRecord, request: TestRequest): Promise<TestResult> => {
    const model = request.ai_model ?? DEFAULT_AI_MODEL;
    // A missing key is known before anything starts.
    const agent = await agentFor(model, deps);
    const started = clock();
    const signal = AbortSignal.timeout(limits.timeoutMs);
    const definition = server.definition;
    const userId = request.context?.user_id;
    // the values the request gives (a stand-in API's address) over the placeholders
    const given = { ...placeholderEnv(definition), ...request.env_vars };
    const access = await localCredentials.prepare(definition, given, userId);
    const env = access.env;
    const name = server.server.name;

    const at = performance.now();
    const phases: Record<string, number> = {};
    const phase = (name: string, since: number): number => {
      const now = performance.now();
      phases[name] = Math.round((now - since) * 10) / 10;
      return now;
    };
    let child;
    try {
      child = await deps.startRuntime({
        bundleDir: server.bundleDir,
        port: 0,
        host: '127.0.0.1',
        env,
        logLevel: 'info',
        onLog: () => {},
      });
    } catch (error) {
      log.warn('test server did not start', { mcp_id: server.server.mcp_id, error });
      throw new ServiceError('internal', `the server ${name} could not be started for the test: ${messageOf(error)}`);
    }
    let mark = phase('start_ms', at);
    const { openSession } = await loadSession();
    let session;
    try {
      try {
        session = await openSession({
          mcpUrl: child.mcpUrl,
          userId,
          token: await access.token(child.mcpUrl),
          clientVersion: deps.version,
          callTimeoutMs: limits.callTimeoutMs,
          signal,
        });
      } catch (error) {
        if (signal.aborted) throw timedOut(limits);
        throw new ServiceError(
          'internal',
          `the server ${name} started for the test but did not answer MCP: ${messageOf(error)}`,
        );
      }
      mark = phase('session_ms', mark);
      const reply = await agent({ message: request.message, session, limits, signal });
      phase('agent_ms', mark);
      const calls = session.calls;
      const result = testResultOf({ reply, session, model, request, definition, elapsedMs: clock() - started });
      log.info('test run', {
        mcp_id: server.server.mcp_id,
        ai_model: model,
        tool_calls: calls.length,
        success_rate: result.success_rate,
        execution_time: result.execution_time,
        ...phases,
      });
      return result;
    } finally {
      // the answer does not wait for the instance to be gone; close() does
      const instance = child;
      const stopped = (async () => {
        await session?.close().catch(() => undefined);
        await instance
          .stop(2_000)
          .catch((error: unknown) => log.warn('could not stop a test server', { pid: instance.pid, error }));
      })().finally(() => stopping.delete(stopped));
      stopping.add(stopped);
    }
  };

  /** Waits until the instances of finished runs are gone. */
  const close = async (): Promise<void> => {
    closed = true;
    while (stopping.size > 0) await Promise.allSettled([...stopping]);
  };

  return { test, models: () => modelStatuses(deps.env), close };
}

/** What the run did, with the guidance for the server's author (docs/api.md). */
function testResultOf(input: {
  reply: string;
  session: Awaited<ReturnType<typeof SessionModule.openSession>>;
  model: string;
  request: TestRequest;
  definition: ServerRecord['definition'];
  elapsedMs: number;
}): TestResult {
  const { reply, session, model, request, definition } = input;
  const calls = session.calls;
  const resourcesRead = [...session.resourcesRead];
  const run = {
    ai_response: reply,
    tools_used: [...new Set(calls.map((c) => c.name))],
    resources_accessed: resourcesRead,
    success_rate: successRate(calls, resourcesRead),
    ai_model: model,
    tool_calls: [...calls],
  };
  return {
    ...run,
    execution_time: Math.round(input.elapsedMs) / 1000,
    guidance: computeGuidance({
      run,
      tools: definition.tools ?? [],
      expectedTools: request.expect?.tools,
      unmet: model === 'mcpctl-local' ? session.unmet : undefined,
    }),
  };
}

/** Each model of the service, and whether the engine's environment has what it needs. */
function modelStatuses(env: Record<string, string | undefined>): ModelStatus[] {
  return (MODELS as readonly ModelInfo[]).map((model) => {
    const missing = missingKey(model, env);
    return {
      id: model.id,
      ...(model.id === DEFAULT_AI_MODEL ? { default: true } : {}),
      available: missing === undefined,
      ...(model.keyVariable === undefined ? {} : { key_variable: model.keyVariable }),
      ...(missing === undefined ? {} : { reason: `${missing} is not set where the engine runs` }),
    };
  });
}

let sessionModule: Promise<typeof SessionModule> | undefined;
/** The MCP client session module (and the client SDK it loads), once. */
function loadSession(): Promise<typeof SessionModule> {
  return (sessionModule ??= import('./session.js'));
}

/** Loads the session module, the MCP client SDK and the offline agent ahead of the first run. */
async function preload(): Promise<void> {
  const [{ loadClientSdk }] = await Promise.all([loadSession(), import('./local/agent.js')]);
  await loadClientSdk();
}

/**
 * Succeeded calls / calls. With no call: 1 when the agent read a resource (it used the server and
 * nothing failed), 0 when it used nothing at all — a run that tested nothing is not a pass, and 1
 * would read as "all tool calls worked" (docs/api.md).
 */
export function successRate(calls: ReadonlyArray<{ ok: boolean }>, resourcesRead: readonly string[]): number {
  if (calls.length === 0) return resourcesRead.length > 0 ? 1 : 0;
  return Math.round((calls.filter((c) => c.ok).length / calls.length) * 10_000) / 10_000;
}

/** The variable a model needs that the engine's environment lacks. */
function missingKey(model: ModelInfo, env: Record<string, string | undefined>): string | undefined {
  if (model.keyVariable === undefined) return undefined;
  return (env[model.keyVariable]?.trim() ?? '') === '' ? model.keyVariable : undefined;
}

/**
 * The agent of a model. A model whose key is not in the engine's environment is
 * `model_not_configured`: a fault of the service's set-up that no retry mends, known before
 * anything starts.
 */
async function agentFor(model: string, deps: TestServiceDeps): Promise<Agent> {
  if (model === 'mcpctl-local') return (await import('./local/agent.js')).runLocalAgent;
  const provider = findModel(model);
  if (provider?.keyVariable === undefined || provider.urlVariable === undefined) {
    throw new ServiceError('validation_failed', `unknown model ${model}`, [
      { path: 'ai_model', message: 'not a model of this service' },
    ]);
  }
  const missing = missingKey(provider, deps.env);
  if (missing !== undefined) {
    throw new ServiceError(
      'model_not_configured',
      `the model ${model} needs ${missing} in the engine's environment; set it where the engine runs and restart the engine (mcpctl engine stop), or test with mcpctl-local`,
      [{ path: 'ai_model', message: `needs ${missing}` }],
    );
  }
  const apiKey = deps.env[provider.keyVariable]!.trim();
  const baseUrl = deps.env[provider.urlVariable]?.trim();
  const maxRetries = deps.providerRetries ?? 2;
  if (model === 'claude-sonnet-4-5') {
    const { createAnthropicAgent, ANTHROPIC_DEFAULT_URL } = await import('./providers/anthropic.js');
    return createAnthropicAgent({ apiKey, baseUrl: baseUrl || ANTHROPIC_DEFAULT_URL, model, maxRetries });
  }
  const { createOpenAiAgent, OPENAI_DEFAULT_URL } = await import('./providers/openai.js');
  return createOpenAiAgent({ apiKey, baseUrl: baseUrl || OPENAI_DEFAULT_URL, model, maxRetries });
}

function timedOut(limits: AgentLimits): ServiceError {
  return new ServiceError('unavailable', `the test did not finish within ${limits.timeoutMs / 1000} s`);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
