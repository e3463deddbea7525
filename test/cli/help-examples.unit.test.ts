/**
 * Every command's `--help` ends with examples: a command added without them fails here, and every
 * example names a command that exists, so none goes stale when a command is renamed. And a short
 * flag means the same in every command.
 */
import type { Command } from '@commander-js/extra-typings';
import { describe, expect, it } from 'vitest';
import { createProgram } from '../../src/cli/main.js';
import { commandPath } from '../../src/cli/specs/examples.js';

function commandsOf(command: Command): Command[] {
  return command.commands.flatMap((sub) => [sub as Command, ...commandsOf(sub as Command)]);
}

const program = createProgram({ io: {} as never, signal: new AbortController().signal });
// the commands that run something; `export`, `config` and `engine` only group others
const runnable = commandsOf(program).filter((command) => command.commands.length === 0);

describe('--help', () => {
  it.each(runnable.map((command) => [commandPath(command as never), command] as const))(
    '%s ends with examples of itself',
    (path, command) => {
      const help = helpOf(command);
      const examples = help.slice(help.indexOf('\nExamples:\n'));
      expect(help).toContain('\nExamples:\n');
      for (const line of examples.split('\n').filter((l) => /^ {2}\S/.test(l) && !l.includes('<(')))
        expect(line.replace(/^.*?\bmcpctl /, 'mcpctl ')).toMatch(new RegExp(`^mcpctl ${path}(\\s|$)`));
    },
  );
});

describe('short flags', () => {
  it('each means one thing in every command (seen: -w was --watch in one and --window in another)', () => {
    const meanings = new Map<string, Set<string>>();
    for (const command of [program, ...commandsOf(program)])
      for (const option of command.options)
        if (option.short !== undefined)
          meanings.set(option.short, (meanings.get(option.short) ?? new Set()).add(option.long ?? option.short));
    const ambiguous = [...meanings]
      .filter(([, longs]) => longs.size > 1)
      .map(([short, longs]) => `${short}: ${[...longs].join(', ')}`);
    expect(ambiguous).toEqual([]);
  });
});

/** What `mcpctl <path> --help` prints, without running the program. */
function helpOf(command: Command): string {
  let text = '';
  command.configureOutput({ writeOut: (s) => (text += s), writeErr: (s) => (text += s) });
  command.outputHelp();
  return text;
}
