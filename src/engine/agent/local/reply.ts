/** The local agent's reply: what it called and read, quoting each result, and what it could not do. Pure. */
import type { ResourceOutcome, ToolOutcome } from '../agent-types.js';

export type Step =
  | { kind: 'call'; tool: string; args: Record<string, unknown>; outcome: ToolOutcome }
  | { kind: 'read'; uri: string; outcome: ResourceOutcome }
  | { kind: 'needs'; tool: string; missing: string[] }
  /** the tool fits, but the planner could not read these values from the message */
  | { kind: 'unmapped'; tool: string; missing: string[] }
  | { kind: 'needs-uri'; template: string }
  | { kind: 'limit'; limit: number }
  | { kind: 'stopped' };

const QUOTE_CHARS = 2000;

export const NOTHING_FOUND =
  'I did not find a tool or resource on this server that fits this request, so I did not call anything. ' +
  '(mcpctl-local picks tools and resources by the words of their names, descriptions and parameters.)';

export function composeReply(steps: Step[]): string {
  if (steps.length === 0) return NOTHING_FOUND;
  const parts: string[] = [];
  for (const step of steps) {
    switch (step.kind) {
      case 'call': {
        const args = Object.keys(step.args).length === 0 ? 'no arguments' : JSON.stringify(step.args);
        parts.push(
          step.outcome.ok
            ? `I called ${step.tool} with ${args}. It returned:\n${quote(step.outcome.text)}`
            : `I called ${step.tool} with ${args}, but it failed:\n${quote(step.outcome.text)}`,
        );
        break;
      }
      case 'read':
        parts.push(
          step.outcome.ok
            ? `I read ${step.uri}:\n${quote(step.outcome.text)}`
            : `I tried to read ${step.uri}, but it failed:\n${quote(step.outcome.text)}`,
        );
        break;
      case 'needs':
        parts.push(
          `I would use ${step.tool}, but the message does not give its ${list(step.missing)}, so I did not call it.`,
        );
        break;
      case 'unmapped':
        parts.push(
          `I would use ${step.tool}, but I could not read its ${list(step.missing)} from the message, so I did not call it. ` +
            '(mcpctl-local reads words and numbers, not meaning: a model may understand the request.)',
        );
        break;
      case 'needs-uri':
        parts.push(`I would read ${step.template}, but the message does not say which one, so I did not read it.`);
        break;
      case 'limit':
        parts.push(`I stopped after ${step.limit} calls, the limit of one test run.`);
        break;
      case 'stopped':
        parts.push('I stopped: the test run reached its time limit.');
        break;
    }
  }
  return parts.join('\n\n');
}

function quote(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return '(empty)';
  return trimmed.length > QUOTE_CHARS
    ? `${trimmed.slice(0, QUOTE_CHARS)}… (${trimmed.length - QUOTE_CHARS} more characters)`
    : trimmed;
}

function list(names: string[]): string {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} and ${names.at(-1)!}`;
}
