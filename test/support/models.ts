/**
 * Scripts for the provider doubles (provider-double.ts) that make the engine's real test agent
 * behave as a test needs: which tools the model calls, with which arguments, for a message. Each
 * answer is worked out from the request alone, so several test cases may run one after another.
 */
import { anthropicMessage, openAiCompletion, type Script } from './provider-double.js';

/** The calls the model makes for the user's message: tool names (`read_resource` reads a resource) and their input. */
export type Plan = (message: string) => Array<{ name: string; input: Record<string, unknown> }>;

interface Message {
  role: string;
  content: unknown;
}

function text(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((block: { text?: string }) => block.text ?? '').join('');
  return '';
}

/**
 * claude-sonnet-5-5 (Messages API): the first turn makes the calls of `plan`, the next one, after
 * the tool results came back, replies "Done: <message>".
 */
export function scriptedClaude(plan: Plan): Script {
  return (request) => {
    const messages = request.body.messages as Message[];
    const message = text(messages[0]?.content);
    const last = messages.at(-1)!;
    const answered =
      Array.isArray(last.content) && last.content.some((block: { type?: string }) => block.type === 'tool_result');
    const calls = answered ? [] : plan(message);
    if (calls.length === 0) return anthropicMessage([{ type: 'text', text: `Done: ${message}` }], 'end_turn');
    return anthropicMessage(
      calls.map((call, i) => ({ type: 'tool_use', id: `toolu_${i}`, name: call.name, input: call.input })),
      'tool_use',
    );
  };
}

/** gpt-5.4-mini (Chat Completions): calls the first tool it is offered with { city: "Paris" }, then replies. */
export function scriptedGpt(): Script {
  return (request) => {
    const messages = request.body.messages as Message[];
    if (messages.some((m) => m.role === 'tool'))
      return openAiCompletion({ content: `Done: ${text(messages.find((m) => m.role === 'user')?.content)}` }, 'stop');
    const tools = request.body.tools as Array<{ function: { name: string } }>;
    const first = tools.find((tool) => tool.function.name !== 'read_resource')!;
    return openAiCompletion(
      {
        content: null,
        tool_calls: [
          {
            id: 'call_0',
            type: 'function',
            function: { name: first.function.name, arguments: JSON.stringify({ city: 'Paris' }) },
          },
        ],
      },
      'tool_calls',
    );
  };
}
