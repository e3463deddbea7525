/** Build requests the integration tests share: a greeting tool, and a server with one tool that works and one that fails. */
import type { BuildRequestInput } from '../../src/api/contract.js';

type Tool = NonNullable<BuildRequestInput['tools']>[number];

/** A static tool: `greet({ name })` answers `Hello <name>`. */
export const GREET_TOOL: Tool = {
  name: 'greet',
  description: 'Greets someone by name',
  inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  handler: { type: 'static', content: [{ type: 'text', text: 'Hello {{args.name}}' }] },
};

/** `greet`, and a module tool `fail` whose every call throws. */
export function greetAndFail(name: string): BuildRequestInput {
  return {
    name,
    template: 'custom',
    tools: [
      GREET_TOOL,
      {
        name: 'fail',
        description: 'Always fails',
        inputSchema: { type: 'object' },
        handler: { type: 'module', module: 'fail.mjs', export: 'fail' },
      },
    ],
    files: {
      'fail.mjs': { encoding: 'utf8', content: 'export const fail = () => { throw new Error("out of order"); };\n' },
    },
  };
}

/** A tool whose every call is an error result. */
export const BROKEN_TOOL: Tool = {
  name: 'broken',
  description: 'Always fails',
  inputSchema: { type: 'object', properties: {} },
  handler: { type: 'error', message: 'this tool always fails' },
};
