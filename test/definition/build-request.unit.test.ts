import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BuildRequest } from '../../src/api/contract.js';
import { UserError } from '../../src/shared/errors.js';
import { encode, findRelativeImports, MAX_BUILD_FILES_BYTES, toBuildRequest } from '../../src/api/build-request.js';
import { loadDefinition } from '../../src/definition/load.js';

let dir: string;

async function write(files: Record<string, string | Buffer>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
}

async function request(yaml: string) {
  await write({ 'server.yaml': yaml });
  return toBuildRequest(await loadDefinition('server.yaml', { cwd: dir }));
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mcpctl-build-request-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('toBuildRequest', () => {
  it('sends the spec fields and runtime extensions, not deploy, tests, $schema or include', async () => {
    await write({ 'extra.txt': 'x' });
    const body = await request(`$schema: ./schema.json
name: demo
version: 1.2.3
description: A demo
template: basic
instructions: Be brief
auth: { type: bearer, token: "\${MCP_AUTH_TOKEN}" }
include: [extra.txt]
tools:
  - name: t
    description: d
    inputSchema: { type: object }
    handler: { type: static, content: [{ type: text, text: hi }] }
resources:
  - { uri: "docs://a", name: a, description: A, source: { type: text, text: A } }
prompts:
  - name: p
deploy: { environment: staging }
tests: { cases: [{ name: c, message: m }] }
`);
    expect(Object.keys(body).sort()).toEqual(
      [
        'auth',
        'description',
        'files',
        'instructions',
        'name',
        'prompts',
        'resources',
        'template',
        'tools',
        'version',
      ].sort(),
    );
    // ${VAR} references travel as written: they resolve where the server runs.
    expect(body.auth).toEqual({ type: 'bearer', token: '${MCP_AUTH_TOKEN}' });
    expect(body.files).toEqual({ 'extra.txt': { encoding: 'utf8', content: 'x' } });
    expect(BuildRequest.safeParse(body).success).toBe(true);
  });

  it('leaves out files when the definition refers to none', async () => {
    const body = await request(
      'name: demo\ntemplate: basic\nresources:\n  - { uri: "docs://a", name: a, description: A }\n',
    );
    expect(body).toEqual({
      name: 'demo',
      template: 'basic',
      resources: [{ uri: 'docs://a', name: 'a', description: 'A' }],
    });
  });

  it('collects every kind of referenced file, text as utf8 and binary as base64', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff]);
    await write({
      'docs/guide.md': '# Guide ✓\n',
      'notes/a.md': 'A',
      'notes/deep/b.md': 'B',
      'img/logo.png': png,
      'prompt.wav': Buffer.from([0, 1, 2, 3]),
      'scripts/run.mjs': 'console.log(1)',
      'bin/tool.sh': '#!/bin/sh\n',
      'data/x.json': '{}',
      'data/.git/config': 'ignored',
      'data/node_modules/m/index.js': 'ignored',
      'unused.txt': 'not shipped',
    });
    const body = await request(`name: demo
template: advanced
include: [data]
tools:
  - name: run
    description: d
    inputSchema: { type: object }
    handler: { type: exec, command: [node, ./scripts/run.mjs] }
  - name: sh
    description: d
    inputSchema: { type: object }
    handler: { type: exec, cwd: bin, command: [./tool.sh] }
  - name: logo
    description: d
    inputSchema: { type: object }
    handler: { type: static, content: [{ type: image, mimeType: image/png, path: img/logo.png }] }
resources:
  - { uri: "docs://guide", name: g, description: G, source: { type: file, path: docs/guide.md } }
  - { uri: "notes://{id}", name: n, description: N, source: { type: file, path: "notes/{{params.id}}.md" } }
prompts:
  - name: p
    messages:
      - role: user
        content: { type: audio, mimeType: audio/wav, path: prompt.wav }
`);
    expect(Object.keys(body.files ?? {})).toEqual([
      'bin/tool.sh',
      'data/x.json',
      'docs/guide.md',
      'img/logo.png',
      'notes/a.md',
      'notes/deep/b.md',
      'prompt.wav',
      'scripts/run.mjs',
    ]);
    expect(body.files?.['docs/guide.md']).toEqual({ encoding: 'utf8', content: '# Guide ✓\n' });
    expect(body.files?.['img/logo.png']).toEqual({ encoding: 'base64', content: png.toString('base64') });
    expect(body.files?.['prompt.wav']?.encoding).toBe('base64');
  });

  it('follows the relative imports of a TypeScript module', async () => {
    await write({
      'src/tools.ts':
        "import { a } from './lib/a.js';\nimport type { T } from './types';\nexport { b } from \"./b.mjs\";\nimport pkg from 'left-pad';\nexport const x = 1;\n",
      'src/lib/a.ts': "import data from '../../data/table.json' with { type: 'json' };\nexport const a = data;\n",
      'src/types.ts': 'export type T = number;\n',
      'src/b.mts': "const c = await import('./c.js');\nexport const b = c;\n",
      'src/c.js': "module.exports = require('./d');\n",
      'src/d/index.js': 'module.exports = 1;\n',
      'data/table.json': '[1]',
      'src/unused.ts': 'export {};\n',
    });
    const body = await request(`name: demo
template: custom
tools:
  - name: x
    description: d
    inputSchema: { type: object }
    handler: { type: module, module: src/tools.ts }
`);
    expect(Object.keys(body.files ?? {})).toEqual([
      'data/table.json',
      'src/b.mts',
      'src/c.js',
      'src/d/index.js',
      'src/lib/a.ts',
      'src/tools.ts',
      'src/types.ts',
    ]);
  });

  it('refuses more than 10 MiB of files, naming the largest', async () => {
    await write({ 'big.bin': Buffer.alloc(MAX_BUILD_FILES_BYTES - 10), 'small.txt': 'x'.repeat(100) });
    const error = await request('name: demo\ntemplate: basic\ninclude: [big.bin, small.txt]\n').catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UserError);
    expect(error).toMatchObject({ code: 'definition_too_large', exitCode: 2 });
    expect((error as UserError).message).toContain('10.0 MiB');
    expect((error as UserError).problems[0]).toEqual({ where: 'big.bin', message: '10.0 MiB' });
  });

  it('refuses files that fit the limit but not once encoded for the request', async () => {
    await write({ 'big.bin': Buffer.alloc(8 * 1024 * 1024) });
    const error = await request('name: demo\ntemplate: basic\ninclude: [big.bin]\n').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'definition_too_large', exitCode: 2 });
    expect((error as UserError).message).toBe(
      'the build request would be 10.7 MiB, over the 10.0 MiB a service takes (binary files travel as base64, a third larger)',
    );
    expect((error as UserError).problems).toEqual([{ where: 'big.bin', message: '10.7 MiB encoded' }]);
  });

  it('refuses a symbolic link that leads outside the definition folder', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'mcpctl-outside-'));
    try {
      await writeFile(join(outside, 'secret.txt'), 'secret');
      await symlink(join(outside, 'secret.txt'), join(dir, 'link.txt'));
      const error = await request('name: demo\ntemplate: basic\ninclude: [link.txt]\n').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UserError);
      expect((error as UserError).message).toBe('server.yaml cannot be built (1 problem)');
      expect((error as UserError).problems).toEqual([
        {
          where: 'server.yaml:3:11',
          path: 'include[0]',
          message:
            'link.txt leads outside the definition folder through a symbolic link; copy the file into the folder instead',
        },
      ]);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });
});

describe('the code a build ships', () => {
  const MODULE_YAML = `name: demo
template: custom
tools:
  - name: add
    description: Adds two numbers
    inputSchema: { type: object }
    handler: { type: module, module: src/tools.ts }
`;

  it('a TypeScript syntax error is reported at file:line:column of the module', async () => {
    await write({ 'src/tools.ts': 'export function add(a: number, b: number {\n  return a + b;\n}\n' });
    const error = (await request(MODULE_YAML).catch((e: unknown) => e)) as UserError;
    expect(error).toBeInstanceOf(UserError);
    expect(error.exitCode).toBe(2);
    expect(error.problems[0]).toEqual({
      where: 'src/tools.ts:1:42',
      path: 'tools[0].handler.module',
      message: "',' expected.",
    });
  });

  it('checks the modules a module imports, JavaScript too', async () => {
    await write({
      'src/tools.ts': "import { twice } from './lib.js';\nexport const add = (a: number) => twice(a);\n",
      'src/lib.js': 'export const twice = (x) => x *;\n',
    });
    const error = (await request(MODULE_YAML).catch((e: unknown) => e)) as UserError;
    expect(error.problems).toEqual([
      { where: 'src/lib.js:1:32', path: 'tools[0].handler.module', message: 'Expression expected.' },
    ]);
  });

  it('a module without the function its tool names is refused, with what it exports', async () => {
    await write({ 'src/tools.ts': 'export function sum(a: number, b: number) {\n  return a + b;\n}\n' });
    const error = (await request(MODULE_YAML).catch((e: unknown) => e)) as UserError;
    expect(error.problems).toEqual([
      {
        where: 'server.yaml:7:38',
        path: 'tools[0].handler.module',
        message:
          'src/tools.ts has no exported function "add" (the tool name; set handler.export to use another); it exports sum',
      },
    ]);
  });

  it('a completion module without the function it names is refused where the definition names it', async () => {
    await write({ 'src/complete.ts': 'export function towns(): string[] {\n  return [];\n}\n' });
    const yaml = `name: demo
template: custom
prompts:
  - name: trip
    arguments:
      - { name: city, complete: { module: src/complete.ts, export: cities } }
`;
    const error = (await request(yaml).catch((e: unknown) => e)) as UserError;
    expect(error).toBeInstanceOf(UserError);
    expect(error.problems).toEqual([
      {
        where: 'server.yaml:6:68',
        path: 'prompts[0].arguments[0].complete.export',
        message: 'src/complete.ts has no exported function "cities"; it exports towns',
      },
    ]);
    // and the module ships with the build, compiled like a tool's
    await write({ 'src/complete.ts': 'export function cities(): string[] {\n  return [];\n}\n' });
    await expect(request(yaml)).resolves.toMatchObject({ files: { 'src/complete.ts': expect.anything() as unknown } });
  });

  it('accepts the exports a module can have, and leaves alone what its text cannot say', async () => {
    for (const source of [
      'export function add() {}',
      'export const add = () => 1;',
      'const a = 1;\nexport { a as add };',
      'export default { add() { return 1; } };',
      "export * from './other.js';",
      'module.exports = { add() {} };',
    ]) {
      await write({ 'src/tools.ts': source, 'src/other.ts': 'export const add = 1;' });
      await expect(request(MODULE_YAML)).resolves.toMatchObject({ name: 'demo' });
    }
  });

  it('a TypeScript file whose JavaScript name is taken is refused', async () => {
    await write({ 'src/tools.ts': 'export const add = 1;', 'src/tools.js': 'export const add = 1;' });
    const error = (await request(`${MODULE_YAML}include: [src]\n`).catch((e: unknown) => e)) as UserError;
    expect(error.problems.map((p) => p.message)).toEqual([
      'src/tools.js exists too, and src/tools.ts compiles to it; keep only one of them',
    ]);
  });
});

describe('encode', () => {
  it.each([
    ['ascii', Buffer.from('hello'), 'utf8'],
    ['utf-8', Buffer.from('héllo ✓'), 'utf8'],
    ['empty', Buffer.alloc(0), 'utf8'],
    ['a NUL byte', Buffer.from([0x61, 0x00, 0x62]), 'base64'],
    ['invalid utf-8', Buffer.from([0xc3, 0x28]), 'base64'],
  ])('%s → %s', (_, buffer, encoding) => {
    const entry = encode(buffer);
    expect(entry.encoding).toBe(encoding);
    expect(Buffer.from(entry.content, entry.encoding === 'utf8' ? 'utf8' : 'base64')).toEqual(buffer);
  });
});

describe('findRelativeImports', () => {
  it('finds static, dynamic, re-export and require specifiers, relative only', () => {
    const source = [
      "import a from './a.js';",
      "import * as b from '../b';",
      "import { c,\n  d } from './cd.ts';",
      "import './side-effect.js';",
      "export * from './e.js';",
      "export { f } from './f.js';",
      "const g = await import('./g.js');",
      "const h = require('./h.cjs');",
      "import x from 'node:fs';",
      "import y from '@scope/pkg';",
    ].join('\n');
    expect(findRelativeImports(source)).toEqual([
      './a.js',
      '../b',
      './cd.ts',
      './side-effect.js',
      './e.js',
      './f.js',
      './g.js',
      './h.cjs',
    ]);
  });
});
