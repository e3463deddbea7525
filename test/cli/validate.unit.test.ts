import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSandbox, runCli, type Sandbox } from '../support/cli.js';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(async () => {
  await sandbox.cleanup();
});

const validate = (args: string[]) => runCli(args, { cwd: sandbox.dir, env: sandbox.env });

async function writeDefinition(text: string, name = 'server.yaml'): Promise<void> {
  await writeFile(join(sandbox.dir, name), text);
}

const VALID = await readFile(join(import.meta.dirname, '..', 'fixtures', 'definitions', 'notes.yaml'), 'utf8');

describe('mcpctl validate refuses what build refuses', () => {
  const CUSTOM = `name: calc
template: custom
tools:
  - name: add
    description: Adds two numbers
    inputSchema: { type: object }
    handler: { type: module, module: tools.ts }
`;

  it('a TypeScript syntax error in a module: exit 2, at file:line:column of the module, offline', async () => {
    await writeDefinition(CUSTOM);
    await writeFile(join(sandbox.dir, 'tools.ts'), 'export function add(a: number, b: number) {\n  return a +;\n}\n');
    // no service is configured: validate must not need one
    const result = await validate(['validate', 'server.yaml']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('error: server.yaml cannot be built (1 problem)');
    expect(result.stderr).toContain('  tools.ts:2:13  tools[0].handler.module  Expression expected.');
    expect(result.stderr).not.toContain('starting the local engine');
  });

  it('a symbolic link that leads out of the folder', async () => {
    const outside = join(sandbox.dir, 'outside');
    await mkdir(join(sandbox.dir, 'def'));
    await mkdir(outside);
    await writeFile(join(outside, 'secret.md'), 'secret');
    await symlink(join(outside, 'secret.md'), join(sandbox.dir, 'def', 'notes.md'));
    await writeDefinition(
      `name: notes
template: basic
resources:
  - uri: notes://all
    name: all
    description: All notes
    source: { type: file, path: notes.md }
`,
      'def/server.yaml',
    );
    const result = await validate(['validate', 'def/server.yaml', '--json']);
    expect(result.code).toBe(2);
    expect(result.json().error.problems).toEqual([
      {
        where: 'def/server.yaml:7:33',
        path: 'resources[0].source.path',
        message:
          'notes.md leads outside the definition folder through a symbolic link; copy the file into the folder instead',
      },
    ]);
  });
});

describe('mcpctl validate', () => {
  it('says the definition is valid, with its counts and warnings', async () => {
    await writeDefinition(VALID);
    const result = await validate(['validate', 'server.yaml']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(
      [
        '✔ server.yaml is valid: notes, 2 tools, 1 resource, 0 prompts',
        '! server.yaml:3:30  auth.token  a literal token: anyone who can read this file can call the server; use ${MCP_AUTH_TOKEN} and set it at deploy time',
        '',
      ].join('\n'),
    );
  });

  it('lints what makes an agent choose badly: near-identical descriptions, short ones, undescribed required parameters', async () => {
    await writeDefinition(`name: accounts
template: basic
tools:
  - name: find_customer
    description: Looks up a customer account by the holder's name, with its balance and status
    inputSchema:
      type: object
      properties:
        name: { type: string, description: the holder's full name }
      required: [name]
  - name: find_supplier
    description: Looks up a supplier account by the holder's name, with its balance and status
    inputSchema:
      type: object
      properties:
        name: { type: string }
        note: { type: string }
      required: [name]
  - name: ping
    description: Says pong.
    inputSchema: { type: object }
`);
    const result = await validate(['validate', 'server.yaml']);
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')).toEqual([
      '✔ server.yaml is valid: accounts, 3 tools, 0 resources, 0 prompts',
      '! server.yaml:12:18  tools[1].description  near-identical to the description of find_customer (tools[0]): they share "looks", "account", "holder", "name", "balance" and "status" (similarity 0.75; warned from 0.6), so an agent may pick either for the same request: lead each with what sets it apart (find_customer: "customer"; find_supplier: "supplier") and say when to use which',
      '! server.yaml:16:15  tools[1].inputSchema.properties.name  the required parameter "name" has no description: say what value it wants and in which form, so an agent can fill it',
      '! server.yaml:20:18  tools[2].description  too short to choose ping by (2 words that say something; at least 3): say what it does, with what, and what it returns, in the words people ask with',
      '',
    ]);
    const json = await validate(['--json', 'validate', 'server.yaml']);
    expect(json.json().warnings.map((w: { rule?: string }) => w.rule)).toEqual([
      'similar_descriptions',
      'undescribed_parameter',
      'short_description',
    ]);
  });

  it('prints one JSON document with --json', async () => {
    await mkdir(join(sandbox.dir, 'defs'));
    await writeDefinition(VALID, 'defs/server.yaml');
    const result = await validate(['--json', 'validate', 'defs/server.yaml']);
    expect(result.code).toBe(0);
    expect(result.json()).toEqual({
      valid: true,
      file: 'defs/server.yaml',
      name: 'notes',
      template: 'basic',
      tools: 2,
      resources: 1,
      prompts: 0,
      warnings: [
        { where: 'defs/server.yaml:3:30', path: 'auth.token', message: expect.stringContaining('literal token') },
      ],
    });
  });

  it('prints nothing on stdout with --quiet when the definition is valid; a warning still goes to stderr', async () => {
    await writeDefinition(VALID);
    const result = await validate(['--quiet', 'validate', 'server.yaml']);
    expect(result).toMatchObject({ code: 0, stdout: '' });
    expect(result.stderr).toBe(
      'warning: server.yaml:3:30  auth.token  a literal token: anyone who can read this file can call the server; use ${MCP_AUTH_TOKEN} and set it at deploy time\n',
    );
    await writeDefinition(VALID.replace('not-from-env', '"${MCP_AUTH_TOKEN}"'));
    expect(await validate(['--quiet', 'validate', 'server.yaml'])).toMatchObject({ code: 0, stdout: '', stderr: '' });
  });

  it('exits 2 and lists each problem as file:line:column  path  message', async () => {
    await writeDefinition(
      'name: notes\ntemplate: basic\ntools:\n  - name: "bad name"\n    description: d\n    inputSchema: { type: array }\n',
    );
    const result = await validate(['validate', 'server.yaml']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.split('\n').slice(0, 3)).toEqual([
      'error: server.yaml is not a valid definition (2 problems)',
      '  server.yaml:4:11  tools[0].name  must be 1-64 characters of letters, digits, _ or -',
      '  server.yaml:6:26  tools[0].inputSchema.type  inputSchema.type must be "object"',
    ]);
  });

  it('exits 2 when the file is missing', async () => {
    const result = await validate(['validate', 'missing.yaml']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('error: missing.yaml does not exist');
    expect(result.stderr).toContain('mcpctl init');
  });
});
