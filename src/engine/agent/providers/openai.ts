/**
 * Chat Completions with the server's tools as functions: OpenAI's API, and any server that speaks
 * it (Ollama, vLLM, LM Studio, llama.cpp, OpenRouter, Azure OpenAI). The loop sends the
 * conversation, carries out the `tool_calls` it gets back, returns each result as a `tool`
 * message, and ends when the model answers without tool calls or at the run's limits.
 */
import type OpenAI from 'openai';
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

export interface OpenAiAgentOptions {
  /** none: a server of one's own that asks for no key */
  apiKey: string | undefined;
  baseUrl: string;
  model: string;
  maxRetries: number;
  /** for messages: OpenAI, or the OpenAI-compatible server */
  provider: string;
  /** the variable of the key, for messages */
  keyVariable: string | undefined;
  /**
   * OpenAI's own API takes `max_completion_tokens`; servers that only follow its older form
   * (Ollama, vLLM, llama.cpp) read `max_tokens`
   */
  compatible: boolean;
}

export function createOpenAiAgent(options: OpenAiAgentOptions): Agent {
  return async ({ message, session, limits, signal }) => {
    const { default: OpenAIClient } = await import('openai');
    type MessageParam = OpenAI.Chat.ChatCompletionMessageParam;
    type Tool = OpenAI.Chat.ChatCompletionTool;

    const client = new OpenAIClient({
      // the SDK wants a key; a server of one's own ignores it
      apiKey: options.apiKey ?? 'none',
      baseURL: options.baseUrl,
      maxRetries: options.maxRetries,
      timeout: limits.timeoutMs,
    });
    const { tools, resourceTool } = offeredTools(session.catalog);
    const offered: Tool[] = tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
    }));
    const messages: MessageParam[] = [
      { role: 'system', content: systemPrompt(session.catalog) },
      { role: 'user', content: message },
    ];
    const budget = { left: limits.maxToolCalls, limit: limits.maxToolCalls };
    let reply = '';
    const usage = { input_tokens: 0, output_tokens: 0 };

    for (let turn = 0; turn < limits.maxTurns; turn += 1) {
      let completion;
      try {
        completion = await client.chat.completions.create(
          {
            model: options.model,
            messages,
            ...(options.compatible ? { max_tokens: limits.maxTokens } : { max_completion_tokens: limits.maxTokens }),
            ...(offered.length === 0 ? {} : { tools: offered }),
          },
          { signal },
        );
      } catch (error) {
        if (signal.aborted) break;
        if (!(error instanceof OpenAIClient.APIError)) throw error;
        const status = (error as { status?: unknown }).status;
        throw providerError({
          provider: options.provider,
          keyVariable: options.keyVariable,
          baseUrl: options.baseUrl,
          status: typeof status === 'number' ? status : undefined,
          message: providerMessage(error),
          retryAfter: retryAfterOf(error),
        });
      }
      addUsage(usage, completion.usage?.prompt_tokens, completion.usage?.completion_tokens);
      const answer = completion.choices[0]?.message;
      if (answer === undefined) return { reply, usage };
      if (typeof answer.content === 'string' && answer.content.trim() !== '') reply = answer.content.trim();
      const calls = (answer.tool_calls ?? []).flatMap((call) => (call.type === 'function' ? [call] : []));
      if (calls.length === 0) return { reply, usage };
      messages.push({
        role: 'assistant',
        content: answer.content ?? null,
        tool_calls: calls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.function.name, arguments: call.function.arguments },
        })),
      });
      for (const call of calls) {
        let input: unknown;
        try {
          input = call.function.arguments.trim() === '' ? {} : (JSON.parse(call.function.arguments) as unknown);
        } catch {
          session.recordRejectedCall(call.function.name, 'the model sent arguments that are not JSON');
          messages.push({
            role: 'tool',
            tool_call_id: call.id,
            content: 'The arguments were not valid JSON; call the tool again with a JSON object.',
          });
          continue;
        }
        const outcome = await carryOut(session, budget, resourceTool, call.function.name, input);
        messages.push({
          role: 'tool',
          tool_call_id: call.id,
          content: outcome.isError ? `Error: ${outcome.text}` : outcome.text,
        });
      }
      if (signal.aborted) break;
    }
    return { reply: stoppedEarly(reply, signal, limits), usage };
  };
}
