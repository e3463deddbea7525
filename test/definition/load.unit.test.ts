import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserError } from '../../src/shared/errors.js';
import { loadDefinition, parseDefinition } from '../../src/definition/load.js';
import { runCli } from '../support/cli.js';

const fixtures = join(import.meta.dirname, '..', 'fixtures', 'definitions');

/** Parses text as a definition at /defs/server.yaml and returns its error (or undefined). */
async function problemsOf(source: string): Promise<UserError | undefined> {
  try {
    await parseDefinition(source, { file: '/defs/server.yaml', shown: 'server.yaml' });
    return undefined;
  } catch (error) {
    if (error instanceof UserError) return error;
    throw error;
  }
}

const VALID = `name: demo
template: basic
tools:
  - name: greet
    description: Greets
    inputSchema:
      type: object
      properties:
        name: { type: string }
      required: [name]
    handler:
      type: http
      url: https://example.com/{{args.name}}
resources:
  - uri: docs://a
    name: a
    description: A
prompts:
  - name: p
    messages:
      - role: user
        content: hi
`;

describe('parseDefinition', () => {
  it('returns the definition with defaults applied', async () => {
    const loaded = await parseDefinition(VALID, { file: '/defs/server.yaml' });
    expect(loaded.dir).toBe('/defs');
    expect(loaded.definition.tools?.[0]?.handler).toEqual({
      type: 'http',
      method: 'GET',
      url: 'https://example.com/{{args.name}}',
      timeout_ms: 10_000,
      max_bytes: 1024 * 1024,
      result: 'text',
    });
    expect(loaded.warnings).toEqual([]);
  });

  it.each<[string, Array<string | number>, { line: number; column: number } | undefined]>([
    ['the document', [], { line: 1, column: 1 }],
    ['a top-level value', ['template'], { line: 2, column: 11 }],
    ['a list item', ['tools', 0], { line: 4, column: 5 }],
    ['a nested value', ['tools', 0, 'inputSchema', 'type'], { line: 7, column: 13 }],
    ['an item of a flow list', ['tools', 0, 'inputSchema', 'required', 0], { line: 10, column: 18 }],
    ['a value in a flow map', ['tools', 0, 'inputSchema', 'properties', 'name', 'type'], { line: 9, column: 23 }],
    ['a missing key: its map', ['tools', 0, 'title'], { line: 4, column: 5 }],
    ['a missing list item: the list', ['resources', 5], { line: 15, column: 3 }],
    ['past a scalar: the scalar', ['name', 'x'], { line: 1, column: 7 }],
    ['a prompt message', ['prompts', 0, 'messages', 0, 'content'], { line: 22, column: 18 }],
  ])('locates %s', async (_, path, position) => {
    const loaded = await parseDefinition(VALID, { file: '/defs/server.yaml' });
    expect(loaded.locate(path)).toEqual(position);
  });

  it.each<[string, string, Array<{ where: string; path?: string; message: RegExp }>]>([
    ['an empty file', '', [{ where: 'server.yaml:1:1', message: /the file is empty/ }]],
    ['a comment only', '# nothing yet\n', [{ where: 'server.yaml:1:1', message: /the file is empty/ }]],
    ['a list at the top', '- a\n', [{ where: 'server.yaml:1:1', message: /expected object, got array/ }]],
    [
      'missing required fields, at their map',
      'tools:\n  - name: x\n    inputSchema: { type: object }\n',
      [
        { where: 'server.yaml:1:1', path: 'name', message: /^missing required field "name"$/ },
        { where: 'server.yaml:1:1', path: 'template', message: /missing required field "template"/ },
        { where: 'server.yaml:2:5', path: 'tools[0].description', message: /missing required field "description"/ },
      ],
    ],
    [
      'an unknown field, at its key, with a suggestion',
      'name: a\ntemplate: basic\ntools:\n  - name: x\n    description: d\n    input_schema: { type: object }\n    inputSchema: { type: object }\n',
      [
        {
          where: 'server.yaml:6:5',
          path: 'tools[0].input_schema',
          message: /unknown field "input_schema": did you mean "inputSchema"\?/,
        },
      ],
    ],
    [
      'an unknown field without a close match',
      'name: a\ntemplate: basic\ncolour: blue\n',
      [{ where: 'server.yaml:3:1', path: 'colour', message: /^unknown field "colour"$/ }],
    ],
    [
      'an enum value',
      'name: a\ntemplate: fancy\n',
      [{ where: 'server.yaml:2:11', path: 'template', message: /must be one of basic, advanced, custom/ }],
    ],
    [
      'a wrong handler type',
      'name: a\ntemplate: basic\ntools:\n  - name: x\n    description: d\n    inputSchema: { type: object }\n    handler: { type: lambda }\n',
      [
        {
          where: 'server.yaml:7:22',
          path: 'tools[0].handler.type',
          message: /must be one of static, error, http, exec, module/,
        },
      ],
    ],
    [
      'a content item of the wrong shape, for its own kind',
      'name: a\ntemplate: basic\nprompts:\n  - name: p\n    messages:\n      - role: user\n        content: { type: text, txt: hi }\n',
      [
        {
          where: 'server.yaml:7:18',
          path: 'prompts[0].messages[0].content.text',
          message: /missing required field "text"/,
        },
        {
          where: 'server.yaml:7:32',
          path: 'prompts[0].messages[0].content.txt',
          message: /unknown field "txt": did you mean "text"\?/,
        },
      ],
    ],
    [
      'a wrong type',
      'name: a\ntemplate: basic\ntools: 3\n',
      [{ where: 'server.yaml:3:8', path: 'tools', message: /expected array, got number/ }],
    ],
    [
      'duplicate keys',
      'name: a\ntemplate: basic\nname: b\n',
      [{ where: 'server.yaml:3:1', message: /Map keys must be unique: this key appears twice/ }],
    ],
    [
      'two documents',
      'name: a\ntemplate: basic\n---\nname: b\n',
      [{ where: 'server.yaml:3:1', message: /a single YAML document/ }],
    ],
    [
      'an invalid env var name key',
      'name: a\ntemplate: basic\ndeploy:\n  env_vars:\n    BAD-NAME: x\n',
      [{ where: 'server.yaml:5:5', path: 'deploy.env_vars.BAD-NAME', message: /must be an environment variable name/ }],
    ],
  ])('reports %s', async (_, source, expected) => {
    const error = await problemsOf(source);
    expect(error?.code).toBe('invalid_definition');
    expect(error?.exitCode).toBe(2);
    expect(error?.problems).toHaveLength(expected.length);
    expected.forEach((want, i) => {
      const got = error!.problems[i]!;
      expect(got.where).toBe(want.where);
      if (want.path !== undefined) expect(got.path).toBe(want.path);
      expect(got.message).toMatch(want.message);
    });
  });

  it('reports schema and semantic problems together, sorted by position, one per field', async () => {
    const source = `name: "bad name"
template: basic
tools:
  - name: t
    description: d
    inputSchema:
      type: object
      properties:
        a: { type: strin }
      required: [b]
  - name: t
    description: d
    inputSchema: { type: object }
`;
    const error = await problemsOf(source);
    expect(error?.problems.map((p) => [p.where, p.path])).toEqual([
      ['server.yaml:1:7', 'name'],
      ['server.yaml:9:20', 'tools[0].inputSchema.properties.a.type'],
      ['server.yaml:10:18', 'tools[0].inputSchema.required[0]'],
      ['server.yaml:11:11', 'tools[1].name'],
    ]);
  });

  it('returns warnings with positions for a valid definition', async () => {
    const loaded = await parseDefinition(
      'name: a\ntemplate: basic\nauth:\n  type: bearer\n  token: hunter2\ntools: []\n',
      {
        file: '/defs/server.yaml',
        shown: 'server.yaml',
      },
    );
    expect(loaded.warnings).toEqual(
      [
        { where: 'server.yaml:5:10', path: 'auth.token', message: expect.stringMatching(/literal token/) },
        { where: 'server.yaml:1:1', message: expect.stringMatching(/no tools, resources or prompts/) },
      ].sort((a, b) => (a.where < b.where ? -1 : 1)),
    );
  });

  it('ignores top-level x- keys, which may hold YAML anchors, and follows aliases and merges', async () => {
    const source = `name: a
template: basic
x-handler: &hello
  type: static
  content: [{ type: text, text: hi }]
tools:
  - name: t
    description: d
    inputSchema: { type: object }
    handler: *hello
  - name: u
    description: d
    inputSchema: { type: object }
    handler:
      <<: *hello
      content: [{ type: text, text: bye }]
`;
    const loaded = await parseDefinition(source, { file: '/defs/server.yaml' });
    expect(loaded.definition).not.toHaveProperty('x-handler');
    expect(loaded.definition.tools?.[0]?.handler).toEqual({ type: 'static', content: [{ type: 'text', text: 'hi' }] });
    const error = await problemsOf(source.replace('x-handler', 'handlers'));
    expect(loaded.definition.tools?.[1]?.handler).toEqual({ type: 'static', content: [{ type: 'text', text: 'bye' }] });
    expect(error?.problems.map((p) => [p.where, p.path])).toEqual([['server.yaml:3:1', 'handlers']]);
  });

  it('says where a list or map became a key, without garbled field names or a process warning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.message);
    process.on('warning', onWarning);
    try {
      // the second `- name:` indented too little: that list becomes a key of the top-level map
      const misindented = `name: demo
template: basic
tools:
  - name: a
    description: A
    inputSchema: { type: object }
- name: b
    description: B
    inputSchema: { type: object }
`;
      const error = await problemsOf(misindented);
      expect(error?.problems[0]).toEqual({
        where: 'server.yaml:7:1',
        message: 'A block sequence may not be used as an implicit map key',
      });
      for (const problem of error?.problems ?? []) {
        expect(problem.message).not.toContain('\n');
        expect(problem.path).toBeUndefined();
      }

      const explicit = await problemsOf('name: a\ntemplate: basic\n? [a, b]\n: 1\ntools: []\n');
      expect(explicit?.problems).toEqual([
        { where: 'server.yaml:3:3', message: 'a list or map cannot be a key: check the indentation of this line' },
      ]);
      // deeper down too, in a map of a list and in a flow list, two in a row: each said once, and its pair left out
      const nested = await problemsOf(
        'name: a\ntemplate: basic\ntools:\n  - name: t\n    ? { x: 1 }\n    : 1\n    ? [y]\n    : 2\n    description: d\n    inputSchema: { type: object, required: [{ [z]: 1 }] }\n',
      );
      expect(nested?.problems.map((p) => `${p.where} ${p.path ?? ''} ${p.message}`)).toEqual([
        'server.yaml:5:7  a list or map cannot be a key: check the indentation of this line',
        'server.yaml:7:7  a list or map cannot be a key: check the indentation of this line',
        'server.yaml:10:44 tools[0].inputSchema.required["0"] invalid JSON Schema (2020-12): must be string',
        'server.yaml:10:45 tools[0].inputSchema.required[0] expected string, got object',
        'server.yaml:10:47  a list or map cannot be a key: check the indentation of this line',
      ]);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('reads JSON, which is YAML too, and a byte order mark', async () => {
    const loaded = await parseDefinition('\uFEFF{"name": "j", "template": "basic", "tools": []}', {
      file: '/defs/server.json',
    });
    expect(loaded.definition.name).toBe('j');
  });
});

describe('loadDefinition', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mcpctl-load-'));
    await mkdir(join(dir, 'defs', 'data'), { recursive: true });
    await writeFile(
      join(dir, 'defs', 'server.yaml'),
      'name: a\ntemplate: basic\nresources:\n  - uri: docs://a\n    name: a\n    description: A\n    source: { type: file, path: data/a.md }\n  - uri: docs://b\n    name: b\n    description: B\n    source: { type: file, path: data/b.md }\n',
    );
    await writeFile(join(dir, 'defs', 'data', 'a.md'), '# A\n');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('checks referenced files relative to the definition, and names the file relative to cwd', async () => {
    const error = await loadDefinition('defs/server.yaml', { cwd: dir }).catch((e: unknown) => e as UserError);
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).problems).toEqual([
      {
        where: 'defs/server.yaml:11:33',
        path: 'resources[1].source.path',
        message: "data/b.md does not exist (paths are relative to the definition's folder)",
      },
    ]);
    expect((error as UserError).hint).toContain('mcpctl validate defs/server.yaml');
  });

  it('loads a valid file with its absolute path and folder', async () => {
    await writeFile(join(dir, 'defs', 'data', 'b.md'), '# B\n');
    const loaded = await loadDefinition(join(dir, 'defs', 'server.yaml'), { cwd: join(dir, 'defs', 'data') });
    expect(loaded.file).toBe(join(dir, 'defs', 'server.yaml'));
    expect(loaded.dir).toBe(join(dir, 'defs'));
    expect(loaded.definition.resources).toHaveLength(2);
  });

  it('says when the file does not exist', async () => {
    await expect(loadDefinition('nope.yaml', { cwd: dir })).rejects.toMatchObject({
      message: 'nope.yaml does not exist',
      code: 'file_not_found',
      exitCode: 2,
      hint: expect.stringContaining('mcpctl init'),
    });
  });

  it('says when the path is a folder, and names the definition inside', async () => {
    await expect(loadDefinition('defs', { cwd: dir })).rejects.toMatchObject({
      message: 'defs is a folder, not a definition file',
      hint: `pass the definition file itself: ${join('defs', 'server.yaml')}`,
    });
  });
});

describe('mcpctl validate with every kind of problem at once', () => {
  it('reports a syntax error alone: the rest of a half-read document is not worth reading, exit 2', async () => {
    const result = await runCli(['validate', 'four-problems.yaml'], { cwd: fixtures });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    const lines = result.stderr.split('\n');
    expect(lines[0]).toBe('error: four-problems.yaml is not a valid definition (1 problem)');
    expect(lines[1]).toMatch(/^ {2}four-problems\.yaml:2\d:\d+ {2}Missing closing "quote$/);
    expect(lines[2]).toMatch(/^→ fix this line/);
  });

  it('with the syntax error fixed, reports the other three at once, also in the --json error document', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mcpctl-three-'));
    try {
      const source = await readFile(join(fixtures, 'four-problems.yaml'), 'utf8');
      await writeFile(join(dir, 'three.yaml'), source.replace('an unclosed quote', 'a closed quote"'));
      const human = await runCli(['validate', 'three.yaml'], { cwd: dir });
      expect(human.code).toBe(2);
      expect(human.stderr.split('\n').slice(0, 4)).toEqual([
        'error: three.yaml is not a valid definition (3 problems)',
        '  three.yaml:12:25  tools[0].inputSchema.required[1]  "limit" is required but not declared in properties',
        '  three.yaml:13:11  tools[1].name  duplicate tool name "lookup" (already declared by tools[0])',
        '  three.yaml:17:10  resources[0].uri  must have the form <scheme>://<name>, for example notes://today',
      ]);
      const result = await runCli(['--json', 'validate', 'three.yaml'], { cwd: dir });
      expect(result.code).toBe(2);
      const { error } = result.json();
      expect(error.code).toBe('invalid_definition');
      expect(error.exit_code).toBe(2);
      expect(error.problems.map((p: { path?: string }) => p.path)).toEqual([
        'tools[0].inputSchema.required[1]',
        'tools[1].name',
        'resources[0].uri',
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
