/**
 * Answers of OpenAI-compatible servers and of Gemini as they really come over the wire, for the
 * provider doubles (provider-double.ts): Chat Completions with tool calls as Ollama and vLLM
 * return them (each differs from OpenAI's own in small ways a client must take), the model list a
 * reachability check reads, and Gemini's `generateContent` with `functionCall` parts.
 */
import type { Answer, RecordedRequest, Script } from './provider-double.js';

export type ChatServer = 'ollama' | 'vllm';

export interface PlannedCall {
  name: string;
  args: Record<string, unknown>;
}

/**
 * One Chat Completions answer. Ollama sends `finish_reason: "stop"` with its tool calls, an empty
 * content, and an `index` on each call; vLLM sends `"tool_calls"`, a null content and ids of its own form.
 */
export function chatAnswer(server: ChatServer, reply: string | undefined, calls: PlannedCall[] = []): Answer {
  const toolCalls = calls.map((call, i) => ({
    ...(server === 'ollama' ? { index: i, id: `call_${i}abc` } : { id: `chatcmpl-tool-${i}f00` }),
    type: 'function',
    function: { name: call.name, arguments: JSON.stringify(call.args) },
  }));
  const message =
    calls.length === 0
      ? { role: 'assistant', content: reply ?? '' }
      : { role: 'assistant', content: server === 'ollama' ? '' : null, tool_calls: toolCalls };
  const finish = calls.length === 0 || server === 'ollama' ? 'stop' : 'tool_calls';
  return {
    body: {
      id: server === 'ollama' ? 'chatcmpl-412' : 'chatcmpl-9b1c0e',
      object: 'chat.completion',
      created: 1_764_000_000,
      model: server === 'ollama' ? 'llama3.2' : 'Qwen/Qwen2.5-7B-Instruct',
      ...(server === 'ollama' ? { system_fingerprint: 'fp_ollama' } : {}),
      choices: [
        {
          index: 0,
          message,
          finish_reason: finish,
          ...(server === 'vllm' ? { logprobs: null, stop_reason: null } : {}),
        },
      ],
      usage: { prompt_tokens: 210, completion_tokens: 18, total_tokens: 228 },
    },
  };
}

/** GET /v1/models of an OpenAI-compatible server. */
export function modelListAnswer(server: ChatServer): Answer {
  const id = server === 'ollama' ? 'llama3.2' : 'Qwen/Qwen2.5-7B-Instruct';
  return { body: { object: 'list', data: [{ id, object: 'model', created: 1_764_000_000, owned_by: server }] } };
}

/**
 * An OpenAI-compatible server: the model list, then for a conversation the calls of `plan` on the
 * first turn and, once tool messages came back, "Done: <message>".
 */
export function scriptedChatServer(server: ChatServer, plan: (message: string) => PlannedCall[]): Script {
  return (request: RecordedRequest) => {
    if (request.method === 'GET') return modelListAnswer(server);
    const messages = request.body.messages as Array<{ role: string; content: unknown }>;
    const content = messages.find((m) => m.role === 'user')?.content;
    const message = typeof content === 'string' ? content : '';
    if (messages.some((m) => m.role === 'tool')) return chatAnswer(server, `Done: ${message}`);
    return chatAnswer(server, undefined, plan(message));
  };
}

/** One `generateContent` answer: text, or `functionCall` parts. */
export function geminiAnswer(reply: string | undefined, calls: PlannedCall[] = []): Answer {
  const parts = calls.length === 0 ? [{ text: reply ?? '' }] : calls.map((call) => ({ functionCall: call }));
  return {
    body: {
      candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 180, candidatesTokenCount: 12, totalTokenCount: 192 },
      modelVersion: 'gemini-3.5-flash',
      responseId: 'resp-01',
    },
  };
}

export function geminiError(status: number, reason: string, message: string): Answer {
  return { status, body: { error: { code: status, message, status: reason } } };
}

/** Gemini: the calls of `plan` first, and once `functionResponse` parts came back, "Done: <message>". */
export function scriptedGemini(plan: (message: string) => PlannedCall[]): Script {
  return (request: RecordedRequest) => {
    const contents = request.body.contents as Array<{ role: string; parts: Array<Record<string, unknown>> }>;
    const text = contents[0]?.parts[0]?.text;
    const message = typeof text === 'string' ? text : '';
    const answered = contents.some((c) => c.parts.some((part) => part.functionResponse !== undefined));
    return answered ? geminiAnswer(`Done: ${message}`) : geminiAnswer(undefined, plan(message));
  };
}
