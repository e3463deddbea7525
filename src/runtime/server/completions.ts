/**
 * `completion/complete` for a prompt argument or a variable of a resource URI template, from what
 * the definition says: the values it lists (`complete: [..]`, or the argument's `enum`), those
 * starting with what the user typed (case-insensitive); or a function of its own module, which
 * gets the typed value and the arguments already given and answers the values itself. At most
 * 100 values go back, as the protocol allows, with the total. A function that throws, times out
 * or answers something else than strings is a JSON-RPC error, never a crash.
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  type CompleteRequest,
  type CompleteResult,
} from '@modelcontextprotocol/server';
import type { CompletionFunction, PromptDefinition, ResourceDefinition } from '../../definition/schema.js';
import { messageOf, type CallContext, type CompileContext } from './content.js';
import { loadModuleFunction, runWithDeadline } from './module-function.js';

const MAX_VALUES = 100;

type Params = CompleteRequest['params'];

/** What a completion function receives besides the typed value. */
export interface CompletionContext {
  /** the argument or URI-template variable being completed */
  argument: string;
  /** the other arguments (or variables) already given, as the client sent them */
  arguments: Record<string, string>;
  ref: Params['ref'];
  user: { id: string | undefined };
  server: { name: string; version: string };
  signal: AbortSignal;
}

type Complete = (value: string, params: Params, call: CallContext) => Promise<string[]>;

export interface Completions {
  /** something in the definition completes: the `completions` capability is declared */
  readonly any: boolean;
  complete(params: Params, call: CallContext): Promise<CompleteResult>;
}

export async function compileCompletions(
  prompts: readonly PromptDefinition[],
  resources: readonly ResourceDefinition[],
  ctx: CompileContext,
): Promise<Completions> {
  const byPrompt = new Map<string, Map<string, Complete>>();
  for (const [i, prompt] of prompts.entries()) {
    const sources = new Map<string, Complete>();
    for (const [j, argument] of (prompt.arguments ?? []).entries()) {
      const source = argument.complete ?? argument.enum;
      if (source === undefined) continue;
      const what = `argument "${argument.name}" of prompt "${prompt.name}"`;
      sources.set(argument.name, await compileSource(source, what, `prompts[${i}].arguments[${j}].complete`, ctx));
    }
    byPrompt.set(prompt.name, sources);
  }
  const byTemplate = new Map<string, Map<string, Complete>>();
  for (const [i, resource] of resources.entries()) {
    const sources = new Map<string, Complete>();
    for (const [variable, source] of Object.entries(resource.complete ?? {})) {
      sources.set(
        variable,
        await compileSource(
          source,
          `variable "${variable}" of ${resource.uri}`,
          `resources[${i}].complete.${variable}`,
          ctx,
        ),
      );
    }
    byTemplate.set(resource.uri, sources);
  }
  const any = [...byPrompt.values(), ...byTemplate.values()].some((sources) => sources.size > 0);

  return {
    any,
    async complete(params, call) {
      const { ref, argument } = params;
      let sources: Map<string, Complete> | undefined;
      if (ref.type === 'ref/prompt') {
        sources = byPrompt.get(ref.name);
        if (sources === undefined)
          throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${ref.name}`);
      } else {
        sources = byTemplate.get(ref.uri);
        if (sources === undefined)
          throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown resource template: ${ref.uri}`);
      }
      const values = (await sources.get(argument.name)?.(argument.value, params, call)) ?? [];
      return {
        completion: { values: values.slice(0, MAX_VALUES), total: values.length, hasMore: values.length > MAX_VALUES },
      };
    },
  };
}

async function compileSource(
  source: readonly string[] | CompletionFunction,
  what: string,
  where: string,
  ctx: CompileContext,
): Promise<Complete> {
  if (Array.isArray(source)) {
    const listed = source as readonly string[];
    return async (value) => {
      const typed = value.toLowerCase();
      return listed.filter((candidate) => candidate.toLowerCase().startsWith(typed));
    };
  }
  const module = source as CompletionFunction;
  const loaded = await loadModuleFunction<[string, CompletionContext]>(ctx.realDir, module.module, module.export);
  if ('problem' in loaded) {
    ctx.problems.push({ path: where, message: loaded.problem });
    return async () => [];
  }
  // the message reaches the client; its secrets are taken out where requests are traced
  const fail = (message: string): never => {
    throw new ProtocolError(ProtocolErrorCode.InternalError, `completing the ${what}: ${message}`);
  };
  return async (value, params, call) => {
    let answer: unknown;
    try {
      answer = await runWithDeadline(
        (signal) => {
          const context: CompletionContext = {
            argument: params.argument.name,
            arguments: { ...params.context?.arguments },
            ref: params.ref,
            user: { id: call.userId },
            server: ctx.server,
            signal,
          };
          return loaded.fn(value, context);
        },
        call.signal,
        module.timeout_ms,
        () => new Error(`${module.export}() did not answer within ${module.timeout_ms} ms (time-out)`),
      );
    } catch (error) {
      return fail(messageOf(error));
    }
    return toValues(answer, module.export, fail);
  };
}

/** Strings (numbers are written as strings); anything else is the function's mistake. */
function toValues(answer: unknown, name: string, fail: (message: string) => never): string[] {
  if (!Array.isArray(answer))
    return fail(`${name}() must return an array of strings, not ${answer === null ? 'null' : typeof answer}`);
  return answer.map((item, i) => {
    if (typeof item === 'string') return item;
    if (typeof item === 'number') return String(item);
    return fail(`${name}() must return an array of strings; item ${i} is ${item === null ? 'null' : typeof item}`);
  });
}
