/**
 * `completion/complete`: the values a definition lists for a prompt argument (`complete:` of the
 * argument) or for a variable of a resource URI template (`complete:` of the resource), those
 * starting with what the user typed (case-insensitive), at most 100 as the protocol allows.
 */
import { ProtocolError, ProtocolErrorCode, type CompleteRequest, type CompleteResult } from '@modelcontextprotocol/server';
import type { PromptDefinition, ResourceDefinition } from '../definition/schema.js';

const MAX_VALUES = 100;

export interface Completions {
  /** something in the definition completes: the `completions` capability is declared */
  readonly any: boolean;
  complete(params: CompleteRequest['params']): CompleteResult;
}

export function compileCompletions(prompts: readonly PromptDefinition[], resources: readonly ResourceDefinition[]): Completions {
  const byPrompt = new Map<string, Map<string, readonly string[]>>();
  for (const prompt of prompts) {
    const values = new Map<string, readonly string[]>();
    for (const argument of prompt.arguments ?? []) if (argument.complete !== undefined) values.set(argument.name, argument.complete);
    byPrompt.set(prompt.name, values);
  }
  const byTemplate = new Map<string, Map<string, readonly string[]>>();
  for (const resource of resources) byTemplate.set(resource.uri, new Map(Object.entries(resource.complete ?? {})));
  const any = [...byPrompt.values(), ...byTemplate.values()].some((values) => values.size > 0);

  return {
    any,
    complete({ ref, argument }) {
      let values: Map<string, readonly string[]> | undefined;
      if (ref.type === 'ref/prompt') {
        values = byPrompt.get(ref.name);
        if (values === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${ref.name}`);
      } else {
        values = byTemplate.get(ref.uri);
        if (values === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown resource template: ${ref.uri}`);
      }
      const typed = argument.value.toLowerCase();
      const matching = (values.get(argument.name) ?? []).filter((value) => value.toLowerCase().startsWith(typed));
      return {
        completion: {
          values: matching.slice(0, MAX_VALUES),
          total: matching.length,
          hasMore: matching.length > MAX_VALUES,
        },
      };
    },
  };
}
