/**
 * What the model-backed agents share: the system prompt, the server's tools as the model sees
 * them (plus one tool that reads resources), carrying out the model's tool calls within the
 * run's budget, and turning a provider's failure into the service error docs/api.md names.
 */
import { HttpError } from '../../http/respond.js';
import { ServiceError } from '../../service-error.js';
import type { AgentLimits, AgentSession, Catalog, InputSchema, TokenUsage } from '../agent-types.js';

export interface OfferedTool {
  name: string;
  description: string;
  inputSchema: InputSchema;
}

const RESOURCE_TOOL = 'read_resource';
const LISTED_RESOURCES = 50;

/** The system prompt: what the agent is for, the server's own instructions. */
export function systemPrompt(catalog: Catalog): string {
  const lines = [
    'You are an assistant that answers the user with the tools and resources of one MCP server.',
    'Use the tools when they help; read a resource when its content is needed. Answer briefly, from what the tools and resources returned.',
  ];
  if (catalog.instructions !== undefined && catalog.instructions.trim() !== '')
    lines.push('', 'The server says:', catalog.instructions.trim());
  return lines.join('\n');
}

/** The server's tools as offered to a model, and the name of the resource-reading tool (undefined when there are no resources). */
export function offeredTools(catalog: Catalog): { tools: OfferedTool[]; resourceTool: string | undefined } {
  const tools: OfferedTool[] = catalog.tools.map((tool) => ({
    name: tool.name,
    description: [tool.title, tool.description].filter((t) => t !== undefined && t !== '').join(': ') || tool.name,
    inputSchema: { ...tool.inputSchema, type: 'object', properties: tool.inputSchema.properties ?? {} },
  }));
  if (catalog.resources.length === 0 && catalog.templates.length === 0) return { tools, resourceTool: undefined };
  // A server's own tool may already have the name.
  let name = RESOURCE_TOOL;
  for (let n = 2; catalog.tools.some((t) => t.name === name); n += 1) name = `${RESOURCE_TOOL}_${n}`;
  const listed = [
    ...catalog.resources
      .slice(0, LISTED_RESOURCES)
      .map((r) => `- ${r.uri} (${r.name})${r.description === undefined ? '' : `: ${r.description}`}`),
    ...catalog.templates
      .slice(0, LISTED_RESOURCES)
      .map(
        (t) =>
          `- ${t.uriTemplate} (template; fill in the {variables})${t.description === undefined ? '' : `: ${t.description}`}`,
      ),
  ];
  tools.push({
    name,
    description: `Reads a resource of the server by its URI and returns its content. Resources:\n${listed.join('\n')}`,
    inputSchema: {
      type: 'object',
      properties: { uri: { type: 'string', description: 'the URI of the resource' } },
      required: ['uri'],
    },
  });
  return { tools, resourceTool: name };
}

/** Carries out one tool call of the model: a server tool, or a resource read. Over the budget, the model is told so. */
export async function carryOut(
  session: AgentSession,
  budget: { left: number; limit: number },
  resourceTool: string | undefined,
  name: string,
  input: unknown,
): Promise<{ text: string; isError: boolean }> {
  if (budget.left <= 0)
    return {
      text: `Not run: this test allows at most ${budget.limit} tool calls. Answer with what you have.`,
      isError: true,
    };
  budget.left -= 1;
  const args =
    input !== null && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
  if (name === resourceTool) {
    const uri = typeof args.uri === 'string' ? args.uri : '';
    if (uri === '') return { text: 'read_resource needs a uri', isError: true };
    const outcome = await session.readResource(uri);
    return { text: outcome.text === '' ? '(empty)' : outcome.text, isError: !outcome.ok };
  }
  const outcome = await session.callTool(name, args);
  return { text: outcome.text === '' ? '(no content)' : outcome.text, isError: !outcome.ok };
}

/** Adds one turn's tokens to the run's (a server that reports none adds nothing). */
export function addUsage(usage: TokenUsage, input: number | null | undefined, output: number | null | undefined): void {
  usage.input_tokens += typeof input === 'number' ? input : 0;
  usage.output_tokens += typeof output === 'number' ? output : 0;
}

/** The reply of a run the model did not finish, saying why it stopped. */
export function stoppedEarly(reply: string, signal: AbortSignal, limits: AgentLimits): string {
  const ending = signal.aborted
    ? 'the test run reached its time limit'
    : `the test run allows ${limits.maxTurns} turns`;
  return `${reply === '' ? '' : `${reply}\n\n`}(stopped before the model finished: ${ending})`;
}

export interface ProviderFailure {
  /** Anthropic, OpenAI, Google Gemini, the OpenAI-compatible server */
  provider: string;
  /** none: a server that asks for no key */
  keyVariable: string | undefined;
  baseUrl: string;
  /** the HTTP status the provider answered, when it answered */
  status?: number | undefined;
  /** the provider's own message */
  message: string;
  /** the provider's Retry-After, in seconds */
  retryAfter?: string | null | undefined;
}

/**
 * A provider's failure as a service error: a refused key is `model_not_configured` (only a new
 * key where the engine runs mends it, so no client should retry it); a rate limit, an outage or an
 * unreachable provider is `unavailable` (the engine's dependency), a rate limit with the
 * provider's `Retry-After`; anything else the provider refused is `internal`, with its words.
 */
export function providerError(failure: ProviderFailure): ServiceError {
  const { provider, keyVariable, status, message } = failure;
  const said = message.trim() === '' ? '' : `: ${message.trim().slice(0, 300)}`;
  if (status === undefined)
    return new ServiceError('unavailable', `could not reach ${provider} at ${failure.baseUrl}${said}`);
  if (status === 401 || status === 403) {
    const key = keyVariable === undefined ? 'request, made without a key' : keyVariable;
    const mend =
      keyVariable === undefined
        ? "name the variable of its key in the model's entry (api_key_env) of the engine settings"
        : 'set a valid key where the engine runs, or export it and run `mcpctl engine reload`';
    return new ServiceError(
      'model_not_configured',
      `${provider} refused the engine's ${key} (HTTP ${status})${said}; ${mend}`,
      [{ path: 'ai_model', message: `${keyVariable ?? 'the request'} was refused` }],
    );
  }
  if (status === 429) {
    const seconds = failure.retryAfter?.trim() ?? '';
    const wait: Record<string, string> = /^\d+$/.test(seconds) ? { 'Retry-After': seconds } : {};
    return new HttpError('unavailable', `${provider} is rate limiting the engine (HTTP 429)${said}; retry later`, wait);
  }
  if (status >= 500) return new ServiceError('unavailable', `${provider} failed (HTTP ${status})${said}; retry later`);
  return new ServiceError('internal', `${provider} refused the test's request (HTTP ${status})${said}`);
}

/** The Retry-After of an SDK error's response, when it has one. */
export function retryAfterOf(error: unknown): string | null | undefined {
  const headers = (error as { headers?: unknown } | null)?.headers;
  return headers instanceof Headers ? headers.get('retry-after') : undefined;
}

/** The provider's message inside an SDK error: the body's error.message when there is one. */
export function providerMessage(error: unknown): string {
  const body = (error as { error?: unknown } | null)?.error;
  const inner = (body as { error?: { message?: unknown }; message?: unknown } | undefined) ?? {};
  if (typeof inner.error?.message === 'string') return inner.error.message;
  if (typeof inner.message === 'string') return inner.message;
  return error instanceof Error ? error.message : String(error);
}
