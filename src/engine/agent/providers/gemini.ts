/**
 * Google's Gemini API (`generateContent`) with the server's tools as function declarations. The
 * loop sends the conversation, carries out the `functionCall` parts it gets back, returns each
 * result as a `functionResponse` part, and ends when the model answers without calls or at the
 * run's limits.
 */
import type { Content, FunctionDeclaration, GenerateContentResponse, Part } from '@google/genai';
import type { Agent } from '../agent-types.js';
import {
  addUsage,
  carryOut,
  offeredTools,
  providerError,
  providerMessage,
  stoppedEarly,
  systemPrompt,
} from './shared.js';

export interface GeminiAgentOptions {
  apiKey: string;
  baseUrl: string;
  model: string;
  maxRetries: number;
  /** the variable of the key, for messages */
  keyVariable: string;
}

export function createGeminiAgent(options: GeminiAgentOptions): Agent {
  return async ({ message, session, limits, signal }) => {
    const { GoogleGenAI, ApiError } = await import('@google/genai');
    const client = new GoogleGenAI({
      apiKey: options.apiKey,
      vertexai: false,
      httpOptions: {
        baseUrl: options.baseUrl,
        timeout: limits.timeoutMs,
        retryOptions: { attempts: options.maxRetries + 1, initialDelay: 0.5, maxDelay: 5 },
      },
    });
    const { tools, resourceTool } = offeredTools(session.catalog);
    const declarations: FunctionDeclaration[] = tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      parametersJsonSchema: tool.inputSchema,
    }));
    const contents: Content[] = [{ role: 'user', parts: [{ text: message }] }];
    const budget = { left: limits.maxToolCalls, limit: limits.maxToolCalls };
    let reply = '';
    const usage = { input_tokens: 0, output_tokens: 0 };

    for (let turn = 0; turn < limits.maxTurns; turn += 1) {
      let response: GenerateContentResponse;
      try {
        response = await client.models.generateContent({
          model: options.model,
          contents,
          config: {
            systemInstruction: systemPrompt(session.catalog),
            maxOutputTokens: limits.maxTokens,
            abortSignal: signal,
            ...(declarations.length === 0 ? {} : { tools: [{ functionDeclarations: declarations }] }),
          },
        });
      } catch (error) {
        if (signal.aborted) break;
        const status = error instanceof ApiError ? error.status : undefined;
        throw providerError({
          provider: 'Google Gemini',
          keyVariable: options.keyVariable,
          baseUrl: options.baseUrl,
          status,
          message: status === undefined ? connectionMessage(error) : providerMessage(geminiBody(error)),
        });
      }
      addUsage(usage, response.usageMetadata?.promptTokenCount, response.usageMetadata?.candidatesTokenCount);
      const said: Part[] = response.candidates?.[0]?.content?.parts ?? [];
      const texts = said.flatMap((part) => (typeof part.text === 'string' && part.thought !== true ? [part.text] : []));
      if (texts.join('').trim() !== '') reply = texts.join('').trim();
      const calls = said.flatMap((part) => (part.functionCall?.name === undefined ? [] : [part.functionCall]));
      if (calls.length === 0) return { reply, usage };
      contents.push({ role: 'model', parts: said });
      const results: Part[] = [];
      for (const call of calls) {
        const name = call.name ?? '';
        const outcome = await carryOut(session, budget, resourceTool, name, call.args ?? {});
        results.push({
          functionResponse: {
            ...(call.id === undefined ? {} : { id: call.id }),
            name,
            response: outcome.isError ? { error: outcome.text } : { output: outcome.text },
          },
        });
      }
      contents.push({ role: 'user', parts: results });
      if (signal.aborted) break;
    }
    return { reply: stoppedEarly(reply, signal, limits), usage };
  };
}

/** The SDK's ApiError carries the body's JSON in its message: its `error.message` when it parses. */
function geminiBody(error: unknown): unknown {
  const text = error instanceof Error ? error.message : '';
  const start = text.indexOf('{');
  if (start < 0) return error;
  try {
    return { error: JSON.parse(text.slice(start)) as unknown };
  } catch {
    return error;
  }
}

function connectionMessage(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  return typeof cause?.code === 'string' ? cause.code : error instanceof Error ? error.message : String(error);
}
