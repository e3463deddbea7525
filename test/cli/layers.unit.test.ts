/**
 * How the CLI's modules depend on each other: a command never imports another command (what two
 * commands share lives in src/cli/steps), so each loads only what it uses.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const COMMANDS = join(import.meta.dirname, '..', '..', 'src', 'cli', 'commands');
const STEPS = join(import.meta.dirname, '..', '..', 'src', 'cli', 'steps');

async function importsOf(dir: string): Promise<Array<{ file: string; from: string }>> {
  const found: Array<{ file: string; from: string }> = [];
  for (const file of (await readdir(dir)).filter((f) => f.endsWith('.ts'))) {
    const text = await readFile(join(dir, file), 'utf8');
    for (const match of text.matchAll(/\bfrom\s+'([^']+)'|\bimport\(\s*'([^']+)'\s*\)/g))
      found.push({ file, from: match[1] ?? match[2]! });
  }
  return found;
}

describe('CLI layers', () => {
  it('no command imports another command', async () => {
    const imports = await importsOf(COMMANDS);
    // the control: commands do import shared modules
    expect(imports.some((i) => i.from.startsWith('../steps/'))).toBe(true);
    expect(imports.filter((i) => i.from.startsWith('./') || i.from.includes('/commands/'))).toEqual([]);
  });

  it('shared steps never import a command', async () => {
    const imports = await importsOf(STEPS);
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter((i) => i.from.includes('/commands/'))).toEqual([]);
  });
});
