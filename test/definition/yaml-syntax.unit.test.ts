/**
 * A YAML syntax error is reported alone: the first one, where the line to fix is, and none of the
 * schema's complaints about the half-read document (a one-space mis-indent of the weather example
 * used to give seven problems with the real one third, a tab thirteen).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDefinition } from '../../src/definition/load.js';
import { UserError } from '../../src/shared/errors.js';

const WEATHER = join(import.meta.dirname, '..', '..', 'examples', 'weather', 'server.yaml');

/** The weather example with line `n` (1-based) changed by `edit`. */
async function weatherWith(n: number, edit: (line: string) => string): Promise<string> {
  const lines = (await readFile(WEATHER, 'utf8')).split('\n');
  lines[n - 1] = edit(lines[n - 1]!);
  return lines.join('\n');
}

async function problemsOf(source: string): Promise<UserError> {
  const failure = await parseDefinition(source, { file: '/defs/server.yaml', shown: 'server.yaml' }).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(failure).toBeInstanceOf(UserError);
  return failure as UserError;
}

describe('YAML syntax errors', () => {
  it('the weather example itself parses', async () => {
    const loaded = await parseDefinition(await readFile(WEATHER, 'utf8'), { file: WEATHER });
    expect(loaded.definition.name).toBe('weather');
  });

  it('a field indented one space too far: one problem, on that line', async () => {
    const source = await weatherWith(16, (line) => ` ${line}`);
    expect(source.split('\n')[15]).toBe('     title: Find a location');
    const error = await problemsOf(source);
    expect(error.message).toBe('server.yaml is not a valid definition (1 problem)');
    expect(error.problems).toEqual([
      {
        where: 'server.yaml:16:6',
        message: expect.stringMatching(/^line 16 is indented more than the fields before it.*line 15/),
      },
    ]);
  });

  it('a top-level field indented one space: one problem, on that line', async () => {
    const error = await problemsOf(await weatherWith(7, (line) => ` ${line}`));
    expect(error.problems).toHaveLength(1);
    expect(error.problems?.[0]?.where).toBe('server.yaml:7:2');
  });

  it('a tab as indentation: one problem, saying to use spaces', async () => {
    const error = await problemsOf(await weatherWith(16, (line) => line.replace(/^ {4}/, '\t')));
    expect(error.problems).toEqual([
      { where: 'server.yaml:16:1', message: 'tabs are not allowed for indentation in YAML: use spaces' },
    ]);
  });

  it('a list item indented one space too far: one problem', async () => {
    const error = await problemsOf(await weatherWith(15, (line) => ` ${line}`));
    expect(error.problems).toHaveLength(1);
    expect(error.problems?.[0]).toEqual({
      where: 'server.yaml:16:1',
      message: expect.stringMatching(/check its indentation/),
    });
  });
});
