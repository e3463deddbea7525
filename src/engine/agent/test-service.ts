/**
 * The engine's TestService: for each POST /v1/test, a fresh instance of the built server on
 * 127.0.0.1, an MCP session to it (as the test's user), the chosen agent's run within the
 * limits, and the test result. The instance always stops afterwards.
 */
import { DEFAULT_AI_MODEL, type TestRequest, type TestResult } from '../../api/contract.js';
import { computeGuidance } from '../../api/guidance.js';
import { evaluateRun, expectedToolsOf } from '../../api/expectations.js';
import { LOCAL_MODEL_ID } from '../../shared/models.js';
import { placeholderEnv } from '../builder.js';
import { createLocalCredentials, type LocalCredentials } from '../local-credentials.js';
import { ServiceError } from '../service-error.js';
import type { Logger } from '../engine-log.js';
import type { ServerRecord } from '../records.js';
import type { StartRuntimeProcess, TestService } from '../services.js';
import { DEFAULT_AGENT_LIMITS, type Agent, type AgentAnswer, type AgentLimits } from './agent-types.js';
import type { ModelCatalog } from './model-catalog.js';
import { ModelRegistry } from './model-registry.js';
import { missingKey, type Reach } from './model-status.js';
import { prepareJudge } from './reply-judge.js';
import type * as SessionModule from './session.js';

export interface TestServiceDeps {
  /** the engine's environment: provider keys and base URLs */
  env: Record<string, string | undefined>;
  /** engine-settings.json, whose `models` add to the built-in ones; read again when it changes */
  settingsFile?: string | undefined;
  /** hides a key handed over by a reload from every log line */
  hideSecret?: (value: string) => void;
  /** whether an OpenAI-compatible server answers, for the listing; default: GET {base_url}/models */
  reach?: Reach;
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

  const registry = new ModelRegistry({ ...deps, clock });
  const agentOf = async (id: string) => agentFor(id, await registry.catalog(), registry.env(), deps);

  const test = async (server: ServerRecord, request: TestRequest): Promise<TestResult> => {
    const model = request.ai_model ?? DEFAULT_AI_MODEL;
    // A missing key is known before anything starts.
    const agent = await agentOf(model);
    const judge = await prepareJudge(request, agentOf, limits);
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
      const answer = answerOf(await agent({ message: request.message, session, limits, signal }));
      const reply = answer.reply;
      phase('agent_ms', mark);
      const calls = session.calls;
      const result = testResultOf({ reply, session, model, request, definition, elapsedMs: clock() - started });
      if (answer.usage !== undefined) Object.assign(result, { usage: answer.usage });
      if (judge !== undefined)
        result.evaluation = { ...result.evaluation, reply: await judge({ message: request.message, reply, signal }) };
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

  return { test, models: () => registry.list(), reload: (values) => registry.reload(values), close };
}

function answerOf(answer: string | AgentAnswer): AgentAnswer {
  return typeof answer === 'string' ? { reply: answer } : answer;
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
  // the offline judge's verdicts are added by the test, with a model judge's
  const evaluation = evaluateRun(run, request.expect && { ...request.expect, reply: undefined });
  return {
    ...run,
    execution_time: Math.round(input.elapsedMs) / 1000,
    ...(evaluation === undefined ? {} : { evaluation }),
    guidance: computeGuidance({
      run,
      tools: definition.tools ?? [],
      expectedTools: expectedToolsOf(request.expect),
      unmet: model === LOCAL_MODEL_ID ? session.unmet : undefined,
    }),
  };
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

/**
 * The agent of a model. An id the engine does not have is refused with the ids it has; a model
 * whose key is not set is `model_not_configured`: a fault of the service's set-up that no retry
 * mends, known before anything starts.
 */
async function agentFor(
  id: string,
  catalog: ModelCatalog,
  env: Record<string, string | undefined>,
  deps: TestServiceDeps,
): Promise<Agent> {
  if (id === LOCAL_MODEL_ID) return (await import('./local/agent.js')).runLocalAgent;
  const model = catalog.models.find((m) => m.id === id);
  if (model === undefined) {
    const ids = catalog.models.map((m) => m.id).join(', ');
    throw new ServiceError(
      'validation_failed',
      `unknown model ${id}: this engine has ${ids}; add others to "models" of its engine-settings.json (mcpctl models lists them)`,
      [{ path: 'ai_model', message: `not a model of this service; one of ${ids}` }],
    );
  }
  const missing = missingKey(model, env);
  if (missing !== undefined) {
    throw new ServiceError(
      'model_not_configured',
      `the model ${id} needs ${missing} where the engine runs; export it and run \`mcpctl engine reload\`, or test with ${LOCAL_MODEL_ID}`,
      [{ path: 'ai_model', message: `needs ${missing}` }],
    );
  }
  const { createModelAgent } = await import('./providers/select.js');
  return createModelAgent(model, env, deps.providerRetries ?? 2);
}

function timedOut(limits: AgentLimits): ServiceError {
  return new ServiceError('unavailable', `the test did not finish within ${limits.timeoutMs / 1000} s`);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
