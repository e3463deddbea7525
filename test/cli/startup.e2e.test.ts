/**
 * `mcpctl --version` and `--help` must load commander and nothing heavy. A resolve hook, registered
 * with `node --import`, records every module URL the real binary resolves; a chunk of the bundle
 * stands for the modules it holds (test/support/bundle.ts).
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
  const sources = ['cli/main.ts', 'cli/entry.ts', 'cli/output.ts', 'shared/errors.ts', 'cli/context.ts'].map((f) => statSync(join(root, 'src', f)).mtimeMs);
  if (existsSync(entry) && statSync(entry).mtimeMs >= Math.max(...sources)) return;
  // tsc emits even when some file has type errors; the exit code is not the point here
  await run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json')], { cwd: root }).catch(
    () => undefined,
  );
  await run(process.execPath, [join(root, 'node_modules', 'rolldown', 'bin', 'cli.mjs'), '-c', 'rolldown.config.js'], { cwd: root });
}

async function loadedBy(args: string[]): Promise<{ urls: string[]; stdout: string }> {
  const log = join(dir, `loads-${args.join('-')}.txt`);
  await writeFile(log, '');
  const { stdout } = await run(process.execPath, ['--import', pathToFileURL(join(dir, 'register.mjs')).href, join(root, 'bin', 'mcpctl.js'), ...args], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', HOME: dir, LOAD_LOG: log, NO_COLOR: '1' },
  });
  const urls = await loadedModules((await readFile(log, 'utf8')).split('\n').filter((line) => line !== ''));
  return { urls, stdout };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mcpctl-startup-'));
  await writeFile(
    join(dir, 'register.mjs'),
    `import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url, { data: { file: process.env.LOAD_LOG } });\n`,
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
    expect(stdout).toContain('up [options] <file>');
    expect(urls.filter((url) => HEAVY.some((heavy) => url.includes(heavy)))).toEqual([]);
  });

  it('test --help lists the models from the one list, loading nothing heavy', async () => {
    const { urls, stdout } = await loadedBy(['test', '--help']);
    for (const model of ['mcpctl-local', 'claude-sonnet-4-5', 'gpt-4.1-mini']) expect(stdout).toContain(model);
    expect(stdout).toContain('ANTHROPIC_API_KEY');
    expect(urls.filter((url) => HEAVY.some((heavy) => url.includes(heavy)))).toEqual([]);
  });
});
