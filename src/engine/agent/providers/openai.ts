/**
 * `gpt-4.1-mini`: OpenAI's Chat Completions API with the server's tools as functions. The loop
 * sends the conversation, carries out the `tool_calls` it gets back, returns each result as a
 * `tool` message, and ends when the model answers without tool calls or at the run's limits.
 */
import type OpenAI from 'openai';
import type { Agent } from '../agent-types.js';
import { carryOut, offeredTools, providerError, providerMessage, retryAfterOf, systemPrompt } from './shared.js';

export interface OpenAiAgentOptions {
  apiKey: string;
  /** OPENAI_BASE_URL, or the public API */
  baseUrl: string;
  model: string;
  maxRetries: number;
}

export const OPENAI_DEFAULT_URL = 'https://api.openai.com/v1';

export function createOpenAiAgent(options: OpenAiAgentOptions): Agent {
  return async ({ message, session, limits, signal }) => {
    const { default: OpenAIClient } = await import('openai');
    type MessageParam = OpenAI.Chat.ChatCompletionMessageParam;
    type Tool = OpenAI.Chat.ChatCompletionTool;

    const client = new OpenAIClient({
      apiKey: options.apiKey,
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

    for (let turn = 0; turn < limits.maxTurns; turn += 1) {
      let completion;
      try {
        completion = await client.chat.completions.create(
          {
            model: options.model,
            messages,
            max_completion_tokens: limits.maxTokens,
            ...(offered.length === 0 ? {} : { tools: offered }),
          },
          { signal },
        );
      } catch (error) {
        if (signal.aborted) break;
        if (!(error instanceof OpenAIClient.APIError)) throw error;
        const status = (error as { status?: unknown }).status;
        throw providerError({
          provider: 'OpenAI',
          keyVariable: 'OPENAI_API_KEY',
          baseUrl: options.baseUrl,
          status: typeof status === 'number' ? status : undefined,
          message: providerMessage(error),
          retryAfter: retryAfterOf(error),
        });
      }
      const answer = completion.choices[0]?.message;
      if (answer === undefined) return reply;
      if (typeof answer.content === 'string' && answer.content.trim() !== '') reply = answer.content.trim();
      const calls = (answer.tool_calls ?? []).flatMap((call) => (call.type === 'function' ? [call] : []));
      if (calls.length === 0) return reply;
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
    const ending = signal.aborted
      ? 'the test run reached its time limit'
      : `the test run allows ${limits.maxTurns} turns`;
    return `${reply === '' ? '' : `${reply}\n\n`}(stopped before the model finished: ${ending})`;
  };
}
