/**
 * The AI models `POST /v1/test` accepts, and what each needs where the service runs. Plain data
 * with no imports: the contract, the engine and the CLI's `test --help` all read this one list
 * (the help may load nothing heavier than commander and this file).
 */

export interface ModelInfo {
  id: string;
  /** one line for help texts */
  summary: string;
  /** the provider's name, for a model behind an API */
  provider?: string;
  /** the variable the service needs for it */
  keyVariable?: string;
  /** the variable that points it at another address of the provider's API */
  urlVariable?: string;
}

export const MODELS = [
  { id: 'mcpctl-local', summary: "the engine's offline keyword planner: no key, no network (default)" },
  {
    id: 'claude-sonnet-4-5',
    summary: "Anthropic's Messages API",
    provider: 'Anthropic',
    keyVariable: 'ANTHROPIC_API_KEY',
    urlVariable: 'ANTHROPIC_BASE_URL',
  },
  {
    id: 'gpt-4.1-mini',
    summary: "OpenAI's Chat Completions API",
    provider: 'OpenAI',
    keyVariable: 'OPENAI_API_KEY',
    urlVariable: 'OPENAI_BASE_URL',
  },
] as const satisfies readonly ModelInfo[];

export type ModelId = (typeof MODELS)[number]['id'];

export function findModel(id: string): ModelInfo | undefined {
  return (MODELS as readonly ModelInfo[]).find((model) => model.id === id);
}

/** The models for `mcpctl test --help`: one aligned line each, saying what the service needs. */
export function describeModels(): string {
  const width = Math.max(...MODELS.map((m) => m.id.length));
  const lines = (MODELS as readonly ModelInfo[]).map((m) => {
    const needs = m.keyVariable === undefined ? '' : `; the service needs ${m.keyVariable}`;
    return `  ${m.id.padEnd(width)}  ${m.summary}${needs}`;
  });
  return ['Models (--model; a /v1 service may list others at GET /v1/models):', ...lines].join('\n');
}
