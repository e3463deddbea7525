/**
 * The engine's TestService: for each POST /v1/test, a fresh instance of the built server on
 * 127.0.0.1, an MCP session to it (as the test's user), the chosen agent's run within the
 * limits, and the test result. The instance always stops afterwards.
 */
import { DEFAULT_AI_MODEL, type TestRequest, type TestResult } from '../../api/contract.js';
import { resolveEnvRefs } from '../../definition/interpolate.js';
import { placeholderEnv } from '../builder.js';
import { HttpError } from '../http/respond.js';
import { ServiceError, type Logger, type ServerRecord, type StartRuntimeProcess, type TestService } from '../types.js';
import { KEY_RETRY_AFTER } from './providers/shared.js';
import { DEFAULT_AGENT_LIMITS, type Agent, type AgentLimits } from './types.js';

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
}

const PROVIDERS = {
  'claude-sonnet-4-5': { provider: 'Anthropic', key: 'ANTHROPIC_API_KEY', url: 'ANTHROPIC_BASE_URL' },
  'gpt-4.1-mini': { provider: 'OpenAI', key: 'OPENAI_API_KEY', url: 'OPENAI_BASE_URL' },
} as const;

export function createTestService(deps: TestServiceDeps): TestService {
  const clock = deps.clock ?? Date.now;
  const limits: AgentLimits = { ...DEFAULT_AGENT_LIMITS, ...deps.limits };
  const log = deps.logger;

  const test = async (server: ServerRecord, request: TestRequest): Promise<TestResult> => {
    const model = request.ai_model ?? DEFAULT_AI_MODEL;
    // A missing key is known before anything starts.
    const agent = await agentFor(model, deps);
    const started = clock();
    const signal = AbortSignal.timeout(limits.timeoutMs);
    const definition = server.definition;
    const env = placeholderEnv(definition);
    const token = definition.auth === undefined ? undefined : resolveEnvRefs(definition.auth.token, env, 'auth.token');
    const name = server.server.name;

    let child;
    try {
      child = await deps.startRuntime({ bundleDir: server.bundleDir, port: 0, host: '127.0.0.1', env, logLevel: 'info', onLog: () => {} });
    } catch (error) {
      log.warn('test server did not start', { mcp_id: server.server.mcp_id, error });
      throw new ServiceError('internal', `the server ${name} could not be started for the test: ${messageOf(error)}`);
    }
    const { openSession } = await import('./session.js');
    let session;
    try {
      try {
        session = await openSession({
          mcpUrl: child.mcpUrl,
          userId: request.context?.user_id,
          token,
          clientVersion: deps.version,
          callTimeoutMs: limits.callTimeoutMs,
          signal,
        });
      } catch (error) {
        if (signal.aborted) throw timedOut(limits);
        throw new ServiceError('internal', `the server ${name} started for the test but did not answer MCP: ${messageOf(error)}`);
      }
      const reply = await agent({ message: request.message, session, limits, signal });
      const calls = session.calls;
      const succeeded = calls.filter((c) => c.ok).length;
      const result: TestResult = {
        ai_response: reply,
        tools_used: [...new Set(calls.map((c) => c.name))],
        resources_accessed: [...session.resourcesRead],
        execution_time: Math.round(clock() - started) / 1000,
        success_rate: calls.length === 0 ? 1 : Math.round((succeeded / calls.length) * 10_000) / 10_000,
        ai_model: model,
        tool_calls: [...calls],
      };
      log.info('test run', {
        mcp_id: server.server.mcp_id,
        ai_model: model,
        tool_calls: calls.length,
        success_rate: result.success_rate,
        execution_time: result.execution_time,
      });
      return result;
    } finally {
      await session?.close();
      await child.stop(2_000).catch((error: unknown) => log.warn('could not stop a test server', { pid: child.pid, error }));
    }
  };

  return { test };
}

/** The agent of a model; `unavailable` when the model's key is not in the engine's environment. */
async function agentFor(model: string, deps: TestServiceDeps): Promise<Agent> {
  if (model === 'mcpctl-local') return (await import('./local/agent.js')).runLocalAgent;
  const provider = PROVIDERS[model as keyof typeof PROVIDERS] as (typeof PROVIDERS)[keyof typeof PROVIDERS] | undefined;
  if (provider === undefined) throw new ServiceError('validation_failed', `unknown model ${model}`, [{ path: 'ai_model', message: 'not a model of this service' }]);
  const apiKey = deps.env[provider.key]?.trim() ?? '';
  if (apiKey === '') {
    throw new HttpError(
      'unavailable',
      `the model ${model} needs ${provider.key} in the engine's environment; set it where the engine runs and restart the engine (mcpctl engine stop), or test with mcpctl-local`,
      KEY_RETRY_AFTER,
    );
  }
  const baseUrl = deps.env[provider.url]?.trim();
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
