/**
 * `mcpctl validate` run as a user runs it: the built binary in its own process. The in-process
 * tests of the command are in validate.unit.test.ts.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadedModules } from '../support/bundle.js';
import { createSandbox, type Sandbox } from '../support/cli.js';

const root = join(import.meta.dirname, '..', '..');
const bin = join(root, 'bin', 'mcpctl.cjs');
const run = promisify(execFile);

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(async () => {
  await sandbox.cleanup();
});

const VALID = await readFile(join(import.meta.dirname, '..', 'fixtures', 'definitions', 'notes.yaml'), 'utf8');

async function writeDefinition(text: string, name = 'server.yaml'): Promise<void> {
  await writeFile(join(sandbox.dir, name), text);
}

describe('end to end: the installed binary (needs `npm run build` first)', () => {
  beforeEach(() => {
    if (!existsSync(join(root, 'dist', 'cli', 'entry.js'))) {
      throw new Error('dist/ is missing: run `npm run build` before these tests (npm test does)');
    }
  });

  it.each(['basic', 'advanced', 'custom'])(
    'init --template %s --yes writes a definition that validate accepts',
    async (template) => {
      const options = { cwd: sandbox.dir, env: sandbox.env, timeout: 20_000 };
      const created = await run(process.execPath, [bin, 'init', 'demo', '--template', template, '--yes'], options);
      expect(created.stdout).toContain(`from the ${template} template`);
      const checked = await run(process.execPath, [bin, '--json', 'validate', 'demo/server.yaml'], options);
      expect(JSON.parse(checked.stdout)).toMatchObject({
        valid: true,
        file: 'demo/server.yaml',
        name: 'demo',
        template,
        warnings: [],
      });
    },
  );

  it('validate loads neither undici nor the API client, nor the MCP SDK for a definition without URI templates', async () => {
    await writeDefinition(VALID);
    const record = join(sandbox.dir, 'imports.txt');
    const hooks = `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(${JSON.stringify(record)}, result.url + '\\n');
  return result;
}`;
    // and what require() loaded (the bundle is CommonJS), which the resolve hook does not see
    const register = [
      `import { appendFileSync } from 'node:fs';`,
      `import { createRequire, register } from 'node:module';`,
      `import { pathToFileURL } from 'node:url';`,
      `register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`,
      `const cache = createRequire(${JSON.stringify(bin)}).cache;`,
      `process.on('exit', () => appendFileSync(${JSON.stringify(record)}, Object.keys(cache).map((f) => pathToFileURL(f).href + '\\n').join('')));`,
    ].join('\n');
    await run(
      process.execPath,
      ['--import', `data:text/javascript,${encodeURIComponent(register)}`, bin, 'validate', 'server.yaml'],
      {
        cwd: sandbox.dir,
        env: sandbox.env,
        timeout: 20_000,
      },
    );
    const urls = await loadedModules((await readFile(record, 'utf8')).split('\n').filter((line) => line !== ''));
    expect(urls.some((url) => url.includes('/node_modules/yaml/'))).toBe(true);
    expect(urls.some((url) => url.endsWith('/dist/definition/load.js'))).toBe(true);
    expect(urls.filter((url) => url.includes('/node_modules/undici/') || url.includes('/dist/api/client.js'))).toEqual(
      [],
    );
    expect(urls.filter((url) => url.includes('/node_modules/@modelcontextprotocol/'))).toEqual([]);
  });
});
