/**
 * A stand-in for a paid model provider on 127.0.0.1, speaking its real wire protocol: each
 * request is recorded (path, headers, JSON body) and answered by the test's script, one step
 * per request. A step may also hold the request open until the double closes.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { closeServer, listen } from './http.js';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read the body loosely
  body: any;
}

export type Answer = { status?: number; body: unknown; headers?: Record<string, string> } | 'hang';
export type Script = (request: RecordedRequest, index: number) => Answer;

export interface ProviderDouble {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startProviderDouble(script: Script): Promise<ProviderDouble> {
  const requests: RecordedRequest[] = [];
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const request: RecordedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: text === '' ? undefined : JSON.parse(text),
      };
      requests.push(request);
      const answer = script(request, requests.length - 1);
      if (answer === 'hang') {
        held.push(res);
        return;
      }
      const body = JSON.stringify(answer.body);
      res.writeHead(answer.status ?? 200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        ...answer.headers,
      });
      res.end(body);
    });
  });
  const { url } = await listen(server);
  return {
    url,
    requests,
    async close() {
      for (const res of held) res.destroy();
      await closeServer(server);
    },
  };
}

/** A Messages API answer: content blocks and a stop reason. */
export function anthropicMessage(content: unknown[], stopReason: 'tool_use' | 'end_turn' | 'max_tokens'): Answer {
  return {
    body: {
      id: 'msg_0123',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-5-5',
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      usage: { input_tokens: 100, output_tokens: 20 },
    },
  };
}

export function anthropicError(status: number, type: string, message: string): Answer {
  return { status, body: { type: 'error', error: { type, message } } };
}

/** A Chat Completions answer: one choice with the assistant's message. */
export function openAiCompletion(
  message: { content: string | null; tool_calls?: unknown[] },
  finishReason: 'tool_calls' | 'stop',
): Answer {
  return {
    body: {
      id: 'chatcmpl-0123',
      object: 'chat.completion',
      created: 1_750_000_000,
      model: 'gpt-5.4-mini',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', refusal: null, ...message },
          finish_reason: finishReason,
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
    },
  };
}

export function openAiError(status: number, type: string, message: string): Answer {
  return { status, body: { error: { message, type, param: null, code: null } } };
}
