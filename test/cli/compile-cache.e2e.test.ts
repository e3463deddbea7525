/**
 * The bundle's own code cache on Node 20 (src/cli/compile-cache.ts), through the real binary: a
 * second run compiles from the cache, a broken cache file is ignored and rewritten, a cache folder
 * that cannot be made does not fail the command, and a changed file is never run from the code
 * of the old one. Node 22.1 and later use Node's own compile cache instead.
 */
import { execFile } from 'node:child_process';
import * as nodeModule from 'node:module';
import { cp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BUNDLE_ENTRY } from '../support/bundle.js';
import { tempDir, type TempDir } from '../support/temp.js';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const bin = join(root, 'bin', 'mcpctl.cjs');
const hasNodeCache = typeof (nodeModule as { enableCompileCache?: unknown }).enableCompileCache === 'function';

let temp: TempDir;
let cache: string;
let file: string;
beforeEach(async () => {
  temp = await tempDir('mcpctl-compile-cache-');
  cache = join(temp.dir, 'cache');
  file = join(temp.dir, 'one.yaml');
  await writeFile(
    file,
    [
      'name: one',
      'template: basic',
      'tools:',
      '  - name: echo',
      '    description: Echo the text back',
      '    inputSchema: { type: object, properties: { text: { type: string } } }',
      '    handler: { type: static, content: [{ type: text, text: "{{args.text}}" }] }',
      '',
    ].join('\n'),
  );
});
afterEach(async () => {
  await temp.cleanup();
});

async function mcpctl(
  args: string[],
  env: Record<string, string> = {},
  entry = bin,
): Promise<{ stdout: string; lines: string[] }> {
  const { stdout, stderr } = await run(process.execPath, [entry, ...args], {
    cwd: temp.dir,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: temp.dir,
      MCPCTL_HOME: join(temp.dir, 'home'),
      MCPCTL_COMPILE_CACHE: cache,
      MCPCTL_DEBUG_COMPILE_CACHE: '1',
      ...env,
    },
    timeout: 30_000,
  });
  return { stdout, lines: stderr.split('\n').filter((line) => line.startsWith('compile cache: ')) };
}

/** The cache files, by name, with their modification times. */
async function cacheFiles(): Promise<Map<string, number>> {
  const [dir] = await readdir(cache);
  if (dir === undefined) return new Map();
  const names = await readdir(join(cache, dir));
  return new Map(
    await Promise.all(
      names.map(async (name) => [join(cache, dir, name), (await stat(join(cache, dir, name))).mtimeMs] as const),
    ),
  );
}

describe.skipIf(hasNodeCache)("the bundle's code cache on Node 20", { timeout: 60_000 }, () => {
  it('is written by the first run and used, unchanged, by the next', async () => {
    const first = await mcpctl(['validate', file]);
    expect(first.stdout).toContain('is valid');
    expect(first.lines.some((line) => line.startsWith('compile cache: miss main-'))).toBe(true);
    expect(first.lines.filter((line) => line.startsWith('compile cache: wrote '))).toHaveLength(1);
    const written = await cacheFiles();
    expect(written.size).toBeGreaterThan(3);

    const second = await mcpctl(['validate', file]);
    expect(second.stdout).toContain('is valid');
    expect(second.lines.length).toBeGreaterThan(3);
    expect(second.lines.every((line) => line.startsWith('compile cache: hit '))).toBe(true);
    // nothing new was compiled: nothing is written
    expect(await cacheFiles()).toEqual(written);
  });

  it('ignores a truncated or corrupt cache file and writes it again', async () => {
    await mcpctl(['validate', file]);
    const files = [...(await cacheFiles()).keys()];
    const main = files.find((name) => /-main-[^/]+\.cache$/.test(name));
    const zod = files.find((name) => /-zod-[^/]+\.cache$/.test(name));
    if (main === undefined || zod === undefined)
      throw new Error(`no cache of the main and zod chunks among ${files.join(', ')}`);
    const good = await readFile(zod);
    // cut short, inside its header
    await writeFile(main, (await readFile(main)).subarray(0, 20));
    // its header intact, V8's data garbage
    const headerEnd = good.indexOf(10) + 1;
    await writeFile(zod, Buffer.concat([good.subarray(0, headerEnd), Buffer.alloc(good.length - headerEnd, 7)]));

    const again = await mcpctl(['validate', file]);
    expect(again.stdout).toContain('is valid');
    expect(again.lines.some((line) => line.startsWith('compile cache: miss main-'))).toBe(true);
    expect(again.lines.some((line) => line.startsWith('compile cache: rejected zod-'))).toBe(true);
    expect((await readFile(main)).length).toBeGreaterThan(1000);
    expect((await readFile(zod)).subarray(headerEnd, headerEnd + 64)).not.toEqual(Buffer.alloc(64, 7));

    const last = await mcpctl(['validate', file]);
    expect(last.lines.every((line) => line.startsWith('compile cache: hit '))).toBe(true);
  });

  it('does not fail a command when its folder cannot be made', async () => {
    const blocker = join(temp.dir, 'a-file');
    await writeFile(blocker, 'not a folder');
    const result = await mcpctl(['validate', file], { MCPCTL_COMPILE_CACHE: join(blocker, 'cache') });
    expect(result.stdout).toContain('is valid');
    expect(result.lines.some((line) => line.startsWith('compile cache: not written: '))).toBe(true);
  });

  it('is off with MCPCTL_COMPILE_CACHE=0 or NODE_DISABLE_COMPILE_CACHE=1', async () => {
    for (const env of [{ MCPCTL_COMPILE_CACHE: '0' }, { NODE_DISABLE_COMPILE_CACHE: '1' }] as Record<
      string,
      string
    >[]) {
      const result = await mcpctl(['validate', file], env);
      expect(result.stdout).toContain('is valid');
      expect(result.lines).toEqual([]);
    }
  });

  it('never runs the code of a file that has changed since its cache was made', async () => {
    // a copy of the package's bundle, whose version file is edited in place, its length the same
    const pkg = join(temp.dir, 'pkg');
    await cp(join(root, 'dist', 'bundle'), join(pkg, 'dist', 'bundle'), { recursive: true });
    await writeFile(join(pkg, 'package.json'), JSON.stringify({ name: 'renamed', version: '1.2.3' }));
    const entry = join(pkg, 'dist', 'bundle', 'mcpctl.cjs');
    expect((await mcpctl(['--version'], {}, entry)).stdout.trim()).toBe('1.2.3');
    expect(
      (await mcpctl(['--version'], {}, entry)).lines.some((line) => line.startsWith('compile cache: hit version-')),
    ).toBe(true);

    const versionFile = (await readdir(join(pkg, 'dist', 'bundle'))).find((name) => name.startsWith('version-'));
    if (versionFile === undefined) throw new Error(`no version chunk next to ${BUNDLE_ENTRY}`);
    const path = join(pkg, 'dist', 'bundle', versionFile);
    const source = await readFile(path, 'utf8');
    expect(source).toContain('"utf8")).version;');
    await writeFile(path, source.replace('"utf8")).version;', '"utf8")).name;   '));

    const changed = await mcpctl(['--version'], {}, entry);
    expect(changed.stdout.trim()).toBe('renamed');
    expect(changed.lines.some((line) => line.startsWith('compile cache: miss version-'))).toBe(true);
  });
});
