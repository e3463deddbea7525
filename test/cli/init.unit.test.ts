import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run } from '../../src/cli/main.js';
import { sanitizeName, schemaFilePath, schemaReference, toExportName } from '../../src/cli/commands/init.js';
import { loadDefinition } from '../../src/definition/load.js';
import { createSandbox, runCli, type Sandbox } from '../support/cli.js';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(async () => {
  await sandbox.cleanup();
});

const init = (args: string[], cwd = sandbox.dir) => runCli(['init', ...args], { cwd, env: sandbox.env });

describe('mcpctl init', () => {
  it.each([
    ['basic', ['server.yaml', 'help.md'], { tools: 2, resources: 2, prompts: 1 }],
    [
      'advanced',
      [
        'server.yaml',
        'data/handbook.md',
        'data/notes/onboarding.md',
        'data/notes/release.md',
        'data/users/alice.json',
        'data/users/bob.json',
        'scripts/text-stats.mjs',
      ],
      { tools: 3, resources: 4, prompts: 2 },
    ],
    ['custom', ['server.yaml', 'tools.ts'], { tools: 3, resources: 1, prompts: 1 }],
  ])('writes the %s template, which loads without problems or warnings', async (template, files, counts) => {
    const result = await init([
      'demo',
      '--template',
      template,
      '--name',
      'acme-notes',
      '--tool',
      'lookup_item',
      '--yes',
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`✔ Created acme-notes from the ${template} template in demo`);
    expect(result.stdout).toContain('mcpctl validate demo/server.yaml');
    for (const file of files) await expect(stat(join(sandbox.dir, 'demo', file))).resolves.toBeTruthy();

    const text = await readFile(join(sandbox.dir, 'demo', 'server.yaml'), 'utf8');
    // relative to the definition, so the project works where it is cloned (seen: an absolute path)
    const reference = text.split('\n')[0]!.replace('# yaml-language-server: $schema=', '');
    expect(reference).not.toMatch(/^\//);
    expect(resolve(sandbox.dir, 'demo', reference)).toBe(schemaFilePath());
    expect(text).not.toMatch(/__[A-Z_]+__/);
    const loaded = await loadDefinition(join(sandbox.dir, 'demo', 'server.yaml'));
    expect(loaded.warnings).toEqual([]);
    expect(loaded.definition.name).toBe('acme-notes');
    expect(loaded.definition.template).toBe(template);
    expect(loaded.definition.tools?.[0]?.name).toBe('lookup_item');
    expect(loaded.definition.tests?.cases[0]?.expect?.tools).toEqual(['lookup_item']);
    expect({
      tools: loaded.definition.tools?.length,
      resources: loaded.definition.resources?.length,
      prompts: loaded.definition.prompts?.length,
    }).toEqual(counts);
  });

  it('points the schema comment at a file that exists', async () => {
    await expect(stat(schemaFilePath())).resolves.toBeTruthy();
  });

  it('names the schema of a project-local install by a path that moves with the project', () => {
    expect(schemaReference('/work/app/servers/notes', '/work/app/node_modules/mcpctl/schema/mcpctl.schema.json')).toBe(
      '../../node_modules/mcpctl/schema/mcpctl.schema.json',
    );
  });

  it('names the module function after the first tool in the custom template', async () => {
    const result = await init(['demo', '--template', 'custom', '--tool', 'make-slug', '--yes']);
    expect(result.code).toBe(0);
    const source = await readFile(join(sandbox.dir, 'demo', 'tools.ts'), 'utf8');
    expect(source).toContain('export function makeSlug(');
    const loaded = await loadDefinition(join(sandbox.dir, 'demo', 'server.yaml'));
    expect(loaded.definition.tools?.[0]?.handler).toMatchObject({
      type: 'module',
      module: 'tools.ts',
      export: 'makeSlug',
    });
  });

  it('keeps the advanced template’s script executable bits as shipped and its content intact', async () => {
    await init(['demo', '--template', 'advanced', '--yes']);
    const script = await readFile(join(sandbox.dir, 'demo', 'scripts', 'text-stats.mjs'), 'utf8');
    expect(script).toContain('process.stdin');
  });

  it('prints one JSON document with --json', async () => {
    const result = await runCli(['--json', 'init', 'svc', '--template', 'basic', '--yes'], {
      cwd: sandbox.dir,
      env: sandbox.env,
    });
    expect(result.code).toBe(0);
    expect(result.json()).toEqual({
      dir: join(sandbox.dir, 'svc'),
      files: ['server.yaml', 'help.md'],
      template: 'basic',
      name: 'svc',
    });
  });

  it('uses the defaults when the terminal is not interactive, even without --yes', async () => {
    const folder = join(sandbox.dir, 'My Server!');
    await mkdir(folder);
    const result = await init([], folder);
    expect(result.code).toBe(0);
    const loaded = await loadDefinition(join(folder, 'server.yaml'));
    expect(loaded.definition).toMatchObject({ name: 'my-server', template: 'basic' });
    expect(loaded.definition.tools?.[0]?.name).toBe('greet');
    expect(result.stdout).toContain('this folder');
    expect(result.stdout).toContain('mcpctl validate server.yaml');
  });

  it('uses the defaults in CI too', async () => {
    const result = await runCli(['init', 'ci-demo', '--template', 'custom'], {
      cwd: sandbox.dir,
      env: { ...sandbox.env, CI: 'true' },
    });
    expect(result.code).toBe(0);
    const loaded = await loadDefinition(join(sandbox.dir, 'ci-demo', 'server.yaml'));
    expect(loaded.definition.tools?.[0]?.name).toBe('slugify');
  });

  it('overwrites nothing without --force: lists every existing file and writes none', async () => {
    await mkdir(join(sandbox.dir, 'demo', 'data', 'notes'), { recursive: true });
    await writeFile(join(sandbox.dir, 'demo', 'server.yaml'), 'mine\n');
    await writeFile(join(sandbox.dir, 'demo', 'data', 'notes', 'release.md'), 'my notes\n');

    const result = await init(['demo', '--template', 'advanced', '--yes']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('error: init would overwrite 2 files; nothing was written');
    expect(result.stderr).toContain('demo/server.yaml  already exists');
    expect(result.stderr).toContain('demo/data/notes/release.md  already exists');
    expect(result.stderr).toContain('pass --force');
    await expect(readFile(join(sandbox.dir, 'demo', 'server.yaml'), 'utf8')).resolves.toBe('mine\n');
    await expect(stat(join(sandbox.dir, 'demo', 'data', 'handbook.md'))).rejects.toThrow();

    const forced = await init(['demo', '--template', 'advanced', '--yes', '--force']);
    expect(forced.code).toBe(0);
    await expect(readFile(join(sandbox.dir, 'demo', 'server.yaml'), 'utf8')).resolves.toContain('template: advanced');
    await expect(readFile(join(sandbox.dir, 'demo', 'data', 'notes', 'release.md'), 'utf8')).resolves.toContain(
      '# Release meeting',
    );
  });

  it('refuses a target that is a file', async () => {
    await writeFile(join(sandbox.dir, 'taken'), 'x');
    const result = await init(['taken', '--yes']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('taken exists and is not a folder');
  });

  it.each([
    [['--name', '-bad'], /"-bad" cannot be a server name/],
    [['--tool', 'has space'], /"has space" cannot be the first tool's name/],
    [['--template', 'custom', '--tool', 'roll_dice'], /already has a tool named like this/],
    [['--template', 'fancy'], /argument 'fancy' is invalid/],
  ])('rejects %j with exit 2', async (flags, message) => {
    const result = await init(['demo', '--yes', ...flags]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    await expect(stat(join(sandbox.dir, 'demo'))).rejects.toThrow();
  });
});

describe('mcpctl init on a terminal', () => {
  it('asks for the name, the template and the first tool', async () => {
    const tty = <T extends PassThrough>(stream: T) =>
      Object.assign(stream, { isTTY: true, columns: 100, rows: 40, setRawMode: () => stream });
    const stdin = tty(new PassThrough());
    const stdout = tty(new PassThrough());
    // A real stream: the prompt wrapper must keep it open across several prompts.
    const stderr = tty(new PassThrough());
    let screen = '';
    const waiters: Array<{ text: string; resolve: () => void }> = [];
    stderr.on('data', (chunk: Buffer) => {
      screen += chunk.toString('utf8');
      for (const waiter of waiters.filter((w) => screen.includes(w.text))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    });
    stdout.resume();
    const shown = (text: string) =>
      new Promise<void>((resolve) => (screen.includes(text) ? resolve() : waiters.push({ text, resolve })));

    const code = run(['--no-color', 'init', 'asked'], {
      stdin,
      stdout,
      stderr,
      env: { PATH: process.env.PATH },
      cwd: sandbox.dir,
    });
    await shown('Server name');
    stdin.write('\u0015'); // clear the default
    stdin.write('team-tools\r');
    await shown('Template');
    stdin.write('\u001b[B'); // down: advanced
    stdin.write('\r');
    await shown('Name of the first tool');
    stdin.write('\u0015');
    stdin.write('count_words\r');
    expect(await code).toBe(0);

    const loaded = await loadDefinition(join(sandbox.dir, 'asked', 'server.yaml'));
    expect(loaded.definition.name).toBe('team-tools');
    expect(loaded.definition.template).toBe('advanced');
    expect(loaded.definition.tools?.[0]?.name).toBe('count_words');
  });
});

describe('mcpctl init on a terminal, where a definition already is', () => {
  it('says so before asking anything', async () => {
    const tty = <T extends PassThrough>(stream: T) =>
      Object.assign(stream, { isTTY: true, columns: 100, rows: 40, setRawMode: () => stream });
    const stdin = tty(new PassThrough());
    const stdout = tty(new PassThrough());
    const stderr = tty(new PassThrough());
    let screen = '';
    const answered = new Set<string>();
    stderr.on('data', (chunk: Buffer) => {
      screen += chunk.toString('utf8');
      // were a question asked, take its default so that the command still ends
      for (const question of ['Server name', 'Template', 'Name of the first tool']) {
        if (screen.includes(question) && !answered.has(question)) {
          answered.add(question);
          setImmediate(() => stdin.write('\r'));
        }
      }
    });
    stdout.resume();
    await mkdir(join(sandbox.dir, 'existing'));
    await writeFile(join(sandbox.dir, 'existing', 'server.yaml'), 'name: mine\n');

    const code = await run(['--no-color', 'init', 'existing'], {
      stdin,
      stdout,
      stderr,
      env: { PATH: process.env.PATH },
      cwd: sandbox.dir,
    });
    expect(code).toBe(2);
    expect(screen).toContain('init would overwrite 1 file; nothing was written');
    expect(screen).not.toContain('Server name');
    expect(await readFile(join(sandbox.dir, 'existing', 'server.yaml'), 'utf8')).toBe('name: mine\n');
  });
});

describe('helpers', () => {
  it.each([
    ['demo', 'demo'],
    ['My Server!', 'my-server'],
    ['__init__', 'init'],
    ['v1.2', 'v1.2'],
    ['日本', 'my-server'],
    ['', 'my-server'],
  ])('sanitizeName(%j) → %j', (input, expected) => {
    expect(sanitizeName(input)).toBe(expected);
  });

  it.each([
    ['greet', 'greet'],
    ['get-weather', 'getWeather'],
    ['get_weather', 'get_weather'],
    ['2fa', '_2fa'],
    ['delete', 'deleteTool'],
  ])('toExportName(%j) → %j', (input, expected) => {
    expect(toExportName(input)).toBe(expected);
  });
});
