/**
 * Anthropic's Messages API with the server's tools. The loop sends the
 * conversation, carries out the `tool_use` blocks it gets back, returns their results as
 * `tool_result` blocks, and ends at `end_turn` or at the run's limits.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { Agent } from '../agent-types.js';
import {
  addUsage,
  carryOut,
  offeredTools,
  providerError,
  providerMessage,
  retryAfterOf,
  stoppedEarly,
  systemPrompt,
} from './shared.js';

export interface AnthropicAgentOptions {
  apiKey: string;
  baseUrl: string;
  model: string;
  maxRetries: number;
  /** the variable of the key, for messages */
  keyVariable: string;
}

export function createAnthropicAgent(options: AnthropicAgentOptions): Agent {
  return async ({ message, session, limits, signal }) => {
    const { default: AnthropicClient } = await import('@anthropic-ai/sdk');
    type MessageParam = Anthropic.MessageParam;
    type ContentBlockParam = Anthropic.ContentBlockParam;
    type ToolResultBlockParam = Anthropic.ToolResultBlockParam;
    type Tool = Anthropic.Tool;

    const client = new AnthropicClient({
      apiKey: options.apiKey,
      baseURL: options.baseUrl,
      maxRetries: options.maxRetries,
      timeout: limits.timeoutMs,
    });
    const { tools, resourceTool } = offeredTools(session.catalog);
    const offered: Tool[] = tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.inputSchema as Tool['input_schema'],
    }));
    const messages: MessageParam[] = [{ role: 'user', content: message }];
    const budget = { left: limits.maxToolCalls, limit: limits.maxToolCalls };
    let reply = '';
    const usage = { input_tokens: 0, output_tokens: 0 };

    for (let turn = 0; turn < limits.maxTurns; turn += 1) {
      let response;
      try {
        response = await client.messages.create(
          {
            model: options.model,
            max_tokens: limits.maxTokens,
            system: systemPrompt(session.catalog),
            messages,
            ...(offered.length === 0 ? {} : { tools: offered }),
          },
          { signal },
        );
      } catch (error) {
        if (signal.aborted) break;
        if (!(error instanceof AnthropicClient.APIError)) throw error;
        throw failure(error, options.baseUrl);
      }
      addUsage(usage, response.usage.input_tokens, response.usage.output_tokens);
      const said: ContentBlockParam[] = [];
      const uses: Array<{ id: string; name: string; input: unknown }> = [];
      const texts: string[] = [];
      for (const block of response.content) {
        if (block.type === 'text') {
          texts.push(block.text);
          said.push({ type: 'text', text: block.text });
        } else if (block.type === 'tool_use') {
          uses.push({ id: block.id, name: block.name, input: block.input });
          said.push({ type: 'tool_use', id: block.id, name: block.name, input: block.input });
        }
      }
      if (texts.length > 0) reply = texts.join('\n').trim();
      if (response.stop_reason === 'pause_turn') {
        messages.push({ role: 'assistant', content: said });
        continue;
      }
      if (response.stop_reason !== 'tool_use' || uses.length === 0) return { reply, usage };
      messages.push({ role: 'assistant', content: said });
      const results: ToolResultBlockParam[] = [];
      for (const use of uses) {
        const outcome = await carryOut(session, budget, resourceTool, use.name, use.input);
        results.push({
          type: 'tool_result',
          tool_use_id: use.id,
          content: outcome.text,
          ...(outcome.isError ? { is_error: true } : {}),
        });
      }
      messages.push({ role: 'user', content: results });
      if (signal.aborted) break;
    }
    return { reply: stoppedEarly(reply, signal, limits), usage };
  };

  /** An SDK error (an answer with a status, or a connection failure without one) as a service error. */
  function failure(error: Error & { status?: unknown }, baseUrl: string) {
    const status = error.status;
    return providerError({
      provider: 'Anthropic',
      keyVariable: options.keyVariable,
      baseUrl,
      status: typeof status === 'number' ? status : undefined,
      message: providerMessage(error),
      retryAfter: retryAfterOf(error),
    });
  }
}
