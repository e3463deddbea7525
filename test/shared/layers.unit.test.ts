/**
 * The lower layers import downward only: shared imports nothing of the project, the definition
 * only shared, the api only the definition and shared.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', '..', 'src');

async function projectImports(folder: string): Promise<string[]> {
  const found: string[] = [];
  for (const file of (await readdir(join(SRC, folder), { recursive: true })).filter((f) => f.endsWith('.ts'))) {
    const text = await readFile(join(SRC, folder, file), 'utf8');
    for (const match of text.matchAll(/\bfrom\s+'([^']+)'|\bimport\(\s*'([^']+)'\s*\)/g)) {
      const from = match[1] ?? match[2]!;
      if (from.startsWith('.')) found.push(join(folder, file, '..', from).split('/')[0]!);
    }
  }
  return [...new Set(found)].sort();
}

describe('layers', () => {
  it.each([
    ['shared', ['shared']],
    ['definition', ['definition', 'shared']],
    ['api', ['api', 'definition', 'shared']],
  ])('%s imports only %j', async (folder, allowed) => {
    const layers = await projectImports(folder);
    // the control: each layer imports at least itself (shared files do not import each other yet)
    if (folder !== 'shared') expect(layers).toContain(folder);
    expect(layers.filter((layer) => !allowed.includes(layer))).toEqual([]);
  });
});
