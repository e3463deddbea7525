/**
 * The AI models a test can run on: the providers the engine speaks, and the models every engine
 * has before its settings add any (`models` of engine-settings.json, src/engine/agent/model-catalog.ts).
 * Plain data with no imports: the contract, the engine and the CLI's `test --help` all read it
 * (the help may load nothing heavier than commander and this file).
 */

/** How the engine talks to a model. */
export const MODEL_PROVIDERS = ['anthropic', 'openai', 'openai-compatible', 'gemini'] as const;
export type ModelProvider = (typeof MODEL_PROVIDERS)[number];

export interface ProviderInfo {
  /** the provider's name in messages */
  label: string;
  /** the variable holding the key, unless an entry names another (`api_key_env`) */
  keyVariable?: string;
  /** the variable that points the built-in models at another address of the provider's API */
  urlVariable?: string;
  /** the provider's public API */
  defaultUrl?: string;
}

export const PROVIDERS: Record<ModelProvider, ProviderInfo> = {
  anthropic: {
    label: 'Anthropic',
    keyVariable: 'ANTHROPIC_API_KEY',
    urlVariable: 'ANTHROPIC_BASE_URL',
    defaultUrl: 'https://api.anthropic.com',
  },
  openai: {
    label: 'OpenAI',
    keyVariable: 'OPENAI_API_KEY',
    urlVariable: 'OPENAI_BASE_URL',
    defaultUrl: 'https://api.openai.com/v1',
  },
  // a server of one's own (Ollama, vLLM, LM Studio, llama.cpp) needs no key; a hosted one names its variable
  'openai-compatible': { label: 'the OpenAI-compatible server' },
  gemini: {
    label: 'Google Gemini',
    keyVariable: 'GEMINI_API_KEY',
    urlVariable: 'GEMINI_BASE_URL',
    defaultUrl: 'https://generativelanguage.googleapis.com',
  },
};

/** A model a test can name with `--model` (its id). */
export interface ModelInfo {
  id: string;
  /** one line for help texts */
  summary: string;
  /** undefined: the engine's offline planner */
  provider?: ModelProvider;
  /** the provider's name of the model */
  model?: string;
  /** the API's address; default: the provider's url variable, else its public API */
  baseUrl?: string;
  /** the variable holding the key; default: the provider's */
  keyVariable?: string;
}

/** The offline default, always the first model. */
export const LOCAL_MODEL_ID = 'mcpctl-local';

/** The models of every engine: current models of each provider's own list, none near its end of life. */
export const MODELS: readonly ModelInfo[] = [
  { id: LOCAL_MODEL_ID, summary: "the engine's offline planner: no key, no network (default)" },
  {
    id: 'claude-sonnet-5-5',
    summary: "Anthropic's Messages API",
    provider: 'anthropic',
    model: 'claude-sonnet-5-5',
  },
  { id: 'gpt-5.4-mini', summary: "OpenAI's Chat Completions API", provider: 'openai', model: 'gpt-5.4-mini' },
  { id: 'gemini-3.5-flash', summary: "Google's Gemini API", provider: 'gemini', model: 'gemini-3.5-flash' },
];

/** The variable holding a model's key, when it needs one. */
export function keyVariableOf(model: ModelInfo): string | undefined {
  return model.keyVariable ?? (model.provider === undefined ? undefined : PROVIDERS[model.provider].keyVariable);
}

/** The models for `mcpctl test --help`: one aligned line each, saying what the service needs. */
export function describeModels(): string {
  const width = Math.max(...MODELS.map((m) => m.id.length));
  const lines = MODELS.map((m) => {
    const key = keyVariableOf(m);
    const needs = key === undefined ? '' : `; the service needs ${key}`;
    return `  ${m.id.padEnd(width)}  ${m.summary}${needs}`;
  });
  return ['Models (--model); an engine may add others in its settings: `mcpctl models` lists them all', ...lines].join(
    '\n',
  );
}
