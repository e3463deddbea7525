/**
 * Bundles: content-addressed, complete, atomic and idempotent, with TypeScript compiled, and
 * enough on their own for a runtime to start from.
 */
import { describe, expect, it } from 'vitest';
import { readdir, readFile, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { BuildRequestInput } from '../../src/api/contract.js';
import { BundleError, readBundle, writeBundle } from '../../src/runtime/host/bundle.js';
import { createRuntime } from '../../src/runtime/server/server.js';
import { connect, firstText, listen, closeServer, makeTempDir } from '../support/runtime.js';

function calculator(
  source = 'export function add({ a, b }: { a: number; b: number }): number {\n  return a + b;\n}\n',
): BuildRequestInput {
  return {
    name: 'calc',
    template: 'custom',
    tools: [
      {
        name: 'add',
        description: 'adds',
        inputSchema: {
          type: 'object',
          properties: { a: { type: 'number' }, b: { type: 'number' } },
          required: ['a', 'b'],
        },
        handler: { type: 'module', module: 'src/calc.ts' },
      },
    ],
    files: {
      'src/calc.ts': { encoding: 'utf8', content: source },
      'bin/run.sh': { encoding: 'utf8', content: '#!/bin/sh\necho hi\n' },
      'data/pixel.bin': { encoding: 'base64', content: Buffer.from([0, 1, 2, 255]).toString('base64') },
    },
  };
}

describe('writeBundle', () => {
  it('writes the definition, the files and compiled TypeScript into a folder named by its digest', async () => {
    await using temp = await makeTempDir();
    const { dir, digest } = await writeBundle(calculator(), temp.path);
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    expect(dir).toBe(join(temp.path, digest));
    expect((await readdir(dir)).sort()).toEqual(['bundle.json', 'definition.json', 'files']);
    expect(await readFile(join(dir, 'files', 'data', 'pixel.bin'))).toEqual(Buffer.from([0, 1, 2, 255]));
    expect(await readFile(join(dir, 'files', 'src', 'calc.js'), 'utf8')).toMatch(
      /export function add\(\{ a, b \}\) \{\n\s+return a \+ b;/,
    );
    expect((await stat(join(dir, 'files', 'bin', 'run.sh'))).mode & 0o111).not.toBe(0);
    expect((await stat(join(dir, 'files', 'data', 'pixel.bin'))).mode & 0o111).toBe(0);

    const bundle = await readBundle(dir);
    expect(bundle.manifest).toMatchObject({
      format: 1,
      digest,
      name: 'calc',
      template: 'custom',
      compiled: { 'src/calc.ts': 'src/calc.js' },
    });
    expect(bundle.manifest.files).toEqual(['bin/run.sh', 'data/pixel.bin', 'src/calc.ts']);
    // defaults are applied in the stored definition
    expect(bundle.definition.tools?.[0]?.handler).toEqual({ type: 'module', module: 'src/calc.ts', timeout_ms: 30000 });
    expect(JSON.parse(await readFile(join(dir, 'definition.json'), 'utf8'))).not.toHaveProperty('files');
  });

  it('is idempotent and gives the same digest for the same request, whatever its key order', async () => {
    await using temp = await makeTempDir();
    const first = await writeBundle(calculator(), temp.path);
    const manifestTime = (await stat(join(first.dir, 'bundle.json'))).mtimeMs;
    const request = calculator();
    const reordered = {
      files: request.files,
      tools: request.tools,
      template: request.template,
      name: request.name,
    } as BuildRequestInput;
    const again = await Promise.all([
      writeBundle(reordered, temp.path),
      writeBundle(calculator(), temp.path),
      writeBundle(calculator(), temp.path),
    ]);
    for (const result of again) expect(result).toEqual(first);
    expect((await stat(join(first.dir, 'bundle.json'))).mtimeMs).toBe(manifestTime);
    // no temporary folder is left behind
    expect(await readdir(temp.path)).toEqual([first.digest]);

    const changed = await writeBundle(
      calculator('export const add = ({ a, b }: { a: number; b: number }) => a + b + 0;\n'),
      temp.path,
    );
    expect(changed.digest).not.toBe(first.digest);
  });

  it('is all a runtime needs, wherever the folder is moved', async () => {
    await using temp = await makeTempDir();
    const { dir } = await writeBundle(calculator(), join(temp.path, 'a'));
    const moved = join(temp.path, 'moved');
    await rename(dir, moved);
    const bundle = await readBundle(moved);
    const runtime = await createRuntime(bundle.definition, { dir: bundle.filesDir });
    const { server, url } = await listen(runtime.handler);
    try {
      await using client = await connect(`${url}/mcp`);
      expect(firstText(await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } }))).toBe('5');
    } finally {
      await closeServer(server);
      await runtime.close();
    }
  });

  it.each([
    ['../escape.txt', 'climb out'],
    ['/etc/passwd', 'relative'],
    ['a\\b.txt', 'separator'],
    ['a//b.txt', 'empty'],
    ['./a.txt', '"."'],
  ])('refuses the unsafe path %s', async (path, message) => {
    await using temp = await makeTempDir();
    const request: BuildRequestInput = {
      name: 'x',
      template: 'basic',
      files: { [path]: { encoding: 'utf8', content: 'x' } },
    };
    await expect(writeBundle(request, temp.path)).rejects.toThrow(message);
    expect(await readdir(temp.path).catch(() => [])).toEqual([]);
  });

  it('reports TypeScript syntax errors with file, line and column, and leaves nothing behind', async () => {
    await using temp = await makeTempDir();
    const broken = writeBundle(calculator('export function add( {\n  return 1;\n}\n'), temp.path);
    await expect(broken).rejects.toBeInstanceOf(BundleError);
    await expect(broken).rejects.toMatchObject({
      problems: expect.arrayContaining(["src/calc.ts:2:10: ':' expected."]),
    });
    expect(await readdir(temp.path)).toEqual([]);
  });

  it('refuses a TypeScript file whose JavaScript output exists already', async () => {
    await using temp = await makeTempDir();
    const request = calculator();
    request.files!['src/calc.js'] = { encoding: 'utf8', content: 'export const add = () => 0;' };
    await expect(writeBundle(request, temp.path)).rejects.toThrow(/src\/calc\.js exists too/);
  });

  it('refuses an invalid request and a folder that is not a bundle', async () => {
    await using temp = await makeTempDir();
    await expect(writeBundle({ name: 'bad name!', template: 'basic' }, temp.path)).rejects.toThrow(/not valid: name/);
    await expect(readBundle(temp.path)).rejects.toThrow(/is not a bundle/);
  });
});
