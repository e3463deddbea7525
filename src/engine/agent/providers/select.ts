/**
 * The agent of a model behind an API: its provider's SDK (loaded only when the model is used),
 * with its address and key. The caller has checked that the key is there.
 */
import { keyVariableOf, PROVIDERS } from '../../../shared/models.js';
import type { Agent } from '../agent-types.js';
import type { ConfiguredModel } from '../model-catalog.js';
import { baseUrlOf } from '../model-status.js';

export async function createModelAgent(
  model: ConfiguredModel,
  env: Record<string, string | undefined>,
  maxRetries: number,
): Promise<Agent> {
  const keyVariable = keyVariableOf(model);
  const apiKey = keyVariable === undefined ? undefined : env[keyVariable]?.trim() || undefined;
  const baseUrl = baseUrlOf(model, env);
  const name = model.model ?? model.id;
  switch (model.provider) {
    case 'anthropic': {
      const { createAnthropicAgent } = await import('./anthropic.js');
      return createAnthropicAgent({
        apiKey: apiKey ?? '',
        baseUrl,
        model: name,
        maxRetries,
        keyVariable: keyVariable!,
      });
    }
    case 'gemini': {
      const { createGeminiAgent } = await import('./gemini.js');
      return createGeminiAgent({ apiKey: apiKey ?? '', baseUrl, model: name, maxRetries, keyVariable: keyVariable! });
    }
    case 'openai':
    case 'openai-compatible': {
      const { createOpenAiAgent } = await import('./openai.js');
      const compatible = model.provider === 'openai-compatible';
      const provider = compatible ? `the OpenAI-compatible server of ${model.id}` : PROVIDERS.openai.label;
      return createOpenAiAgent({ apiKey, baseUrl, model: name, maxRetries, provider, keyVariable, compatible });
    }
    case undefined:
      throw new Error(`the model ${model.id} has no provider`);
  }
}
