/**
 * `mcpctl --version` and `--help` must load commander and nothing heavy, and the commands that only
 * read answers (`deploy <mcp_id>`, `status`) neither undici nor the definition's schema. A resolve
 * hook, registered with `node --import`, records every module URL the real binary resolves, and the
 * files `require` loaded at exit; a chunk of the bundle stands for the modules it holds
 * (test/support/bundle.ts).
 */
import { execFile } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLE_ENTRY, loadedModules } from '../support/bundle.js';
import { createSandbox, runBin, type Sandbox } from '../support/cli.js';

const run = promisify(execFile);
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const entry = BUNDLE_ENTRY;
let dir: string;

const HEAVY = [
  '/node_modules/undici/',
  '/node_modules/ora/',
  '/node_modules/chalk/',
  '/node_modules/@inquirer/',
  '/node_modules/yaml/',
  '/node_modules/zod/',
  '/node_modules/@modelcontextprotocol/',
  '/dist/engine/',
  '/dist/runtime/',
  '/dist/export/',
  '/node_modules/kubernetes-models/',
  '/dist/api/',
  '/dist/definition/',
  // every command, `up` too, is imported only when it runs
  '/dist/cli/commands/',
  '/dist/cli/steps/',
  '/dist/cli/output.js',
  '/dist/cli/github.js',
];

/** Builds dist and the bundle (as `npm run build` does) when missing or older than the CLI sources. */
async function ensureBuilt(): Promise<void> {
  const sources = ['cli/main.ts', 'cli/entry.ts', 'cli/output.ts', 'shared/errors.ts', 'cli/context.ts'].map(
    (f) => statSync(join(root, 'src', f)).mtimeMs,
  );
  if (existsSync(entry) && statSync(entry).mtimeMs >= Math.max(...sources)) return;
  // tsc emits even when some file has type errors; the exit code is not the point here
  await run(
    process.execPath,
    [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json')],
    { cwd: root },
  ).catch(() => undefined);
  await run(process.execPath, [join(root, 'node_modules', 'rolldown', 'bin', 'cli.mjs'), '-c', 'rolldown.config.js'], {
    cwd: root,
  });
}

async function loadedBy(
  args: string[],
  env: Record<string, string> = { HOME: dir },
): Promise<{ urls: string[]; stdout: string }> {
  const log = join(dir, `loads-${args.join('-')}.txt`);
  await writeFile(log, '');
  const { stdout } = await run(
    process.execPath,
    ['--import', pathToFileURL(join(dir, 'register.mjs')).href, join(root, 'bin', 'mcpctl.cjs'), ...args],
    {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', ...env, LOAD_LOG: log, NO_COLOR: '1' },
    },
  );
  const urls = await loadedModules((await readFile(log, 'utf8')).split('\n').filter((line) => line !== ''));
  return { urls, stdout };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mcpctl-startup-'));
  await writeFile(
    join(dir, 'register.mjs'),
    [
      `import { appendFileSync } from 'node:fs';`,
      `import { createRequire, register } from 'node:module';`,
      `import { pathToFileURL } from 'node:url';`,
      `register('./hooks.mjs', import.meta.url, { data: { file: process.env.LOAD_LOG } });`,
      // what require() loaded (createRequire included), which the resolve hook does not see
      `const cache = createRequire(import.meta.url).cache;`,
      `process.on('exit', () => appendFileSync(process.env.LOAD_LOG, Object.keys(cache).map((f) => pathToFileURL(f).href + '\\n').join('')));`,
      '',
    ].join('\n'),
  );
  await writeFile(
    join(dir, 'hooks.mjs'),
    [
      `import { appendFileSync } from 'node:fs';`,
      `let file;`,
      `export function initialize(data) { file = data.file; }`,
      `export async function resolve(specifier, context, next) {`,
      `  const result = await next(specifier, context);`,
      `  appendFileSync(file, result.url + '\\n');`,
      `  return result;`,
      `}`,
      '',
    ].join('\n'),
  );
  await ensureBuilt();
}, 180_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('start-up', () => {
  it('--version alone answers before commander loads', async () => {
    const { urls, stdout } = await loadedBy(['--version']);
    const { version } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string };
    expect(stdout.trim()).toBe(version);
    // the control: the hook sees what is loaded
    expect(urls.some((url) => url.endsWith('/dist/cli/entry.js'))).toBe(true);
    expect(urls.filter((url) => url.includes('/node_modules/') || url.endsWith('/dist/cli/main.js'))).toEqual([]);
  });

  it('--version --json prints one JSON document, still loading nothing heavy', async () => {
    const { urls, stdout } = await loadedBy(['--version', '--json']);
    const { version } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string };
    expect(JSON.parse(stdout)).toEqual({ version, node: process.version });
    // the control: the hook sees what is loaded
    expect(urls.some((url) => url.includes('/node_modules/commander/'))).toBe(true);
    expect(urls.filter((url) => HEAVY.some((heavy) => url.includes(heavy)))).toEqual([]);
  });

  it('--help loads nothing heavy either', async () => {
    const { urls, stdout } = await loadedBy(['--help']);
    expect(stdout).toContain('deploy');
    expect(stdout).toContain('up [options] [file]');
    expect(urls.filter((url) => HEAVY.some((heavy) => url.includes(heavy)))).toEqual([]);
  });

  it('test --help lists the models from the one list, loading nothing heavy', async () => {
    const { urls, stdout } = await loadedBy(['test', '--help']);
    for (const model of ['mcpctl-local', 'claude-sonnet-5-5', 'gpt-5.4-mini']) expect(stdout).toContain(model);
    expect(stdout).toContain('ANTHROPIC_API_KEY');
    expect(urls.filter((url) => HEAVY.some((heavy) => url.includes(heavy)))).toEqual([]);
  });
});

/** What a command that only reads answers must not load: the HTTP client is node:http, and answers need no definition schema. */
const NOT_FOR_ANSWERS = [
  '/node_modules/undici/',
  'node:https',
  '/dist/definition/schema.js',
  '/dist/api/build-schema.js',
  '/node_modules/yaml/',
  '/node_modules/ajv/',
  '/node_modules/ora/',
  '/node_modules/@inquirer/',
  '/node_modules/@modelcontextprotocol/',
  '/dist/runtime/',
];

describe('commands that read answers, against the local engine', { timeout: 120_000 }, () => {
  let box: Sandbox;
  let mcpId: string;

  beforeAll(async () => {
    box = await createSandbox();
    const file = join(box.dir, 'one.yaml');
    const tool = {
      name: 'echo',
      description: 'Echo the text back',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      handler: { type: 'static', content: [{ type: 'text', text: '{{args.text}}' }] },
    };
    await writeFile(file, `name: startup\ntemplate: basic\ntools:\n  - ${JSON.stringify(tool)}\n`);
    // the first command starts the local engine in the background
    const built = await runBin(join(root, 'bin', 'mcpctl.cjs'), ['--json', 'build', file], {
      env: box.env,
      cwd: box.dir,
    });
    expect(built.code, built.stderr).toBe(0);
    mcpId = (JSON.parse(built.stdout) as { mcp_id: string }).mcp_id;
  }, 120_000);

  afterAll(async () => {
    if (box === undefined) return;
    await runBin(join(root, 'bin', 'mcpctl.cjs'), ['engine', 'stop'], { env: box.env, cwd: box.dir });
    await box.cleanup();
  });

  it('deploy <mcp_id> and status load neither undici nor the definition schema', async () => {
    const deploy = await loadedBy(['--json', 'deploy', mcpId, '--env', 'development'], box.env);
    const deployment = JSON.parse(deploy.stdout) as { deployment_id: string; status: string };
    expect(deployment.status).toBe('deployed');
    // the control: the hook sees the client and the contract's answers
    expect(deploy.urls.some((url) => url.endsWith('/dist/api/client.js'))).toBe(true);
    expect(deploy.urls.some((url) => url.endsWith('/dist/api/operations.js'))).toBe(true);
    expect(deploy.urls.filter((url) => NOT_FOR_ANSWERS.some((heavy) => url.includes(heavy)))).toEqual([]);

    const status = await loadedBy(['--json', 'status', deployment.deployment_id], box.env);
    expect(JSON.parse(status.stdout)).toMatchObject({ deployment_id: deployment.deployment_id, status: 'deployed' });
    expect(status.urls.filter((url) => NOT_FOR_ANSWERS.some((heavy) => url.includes(heavy)))).toEqual([]);
  });
});
