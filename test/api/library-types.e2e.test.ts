/**
 * The library entry as a TypeScript user gets it (`npm run build` first): a project that installs
 * mcpctl and imports the client and the contract compiles against its declarations, and a wrong
 * field is an error there (the types are real, not `any`).
 */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBuilt } from '../support/app.js';
import { tempDir } from '../support/temp.js';

const ROOT = join(import.meta.dirname, '..', '..');
let temp: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  requireBuilt();
  temp = await tempDir('mcpctl-library-types-');
  await mkdir(join(temp.dir, 'node_modules'), { recursive: true });
  await symlink(ROOT, join(temp.dir, 'node_modules', 'mcpctl'), 'dir');
  await writeFile(join(temp.dir, 'package.json'), JSON.stringify({ name: 'user', type: 'module' }));
});
afterAll(async () => {
  await temp?.cleanup();
});

/** The diagnostics of compiling `source` as a user's module, one message each. */
async function compile(source: string): Promise<string[]> {
  const file = join(temp.dir, 'user.ts');
  await writeFile(file, source);
  const program = ts.createProgram([file], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
}

describe('the library’s declarations', () => {
  it('type a user’s calls of the client and the contract', async () => {
    const problems = await compile(`
      import { ApiClient, ApiError, type Deployment } from 'mcpctl';
      const client = new ApiClient({ baseUrl: 'http://127.0.0.1:47321', apiKey: 'k' });
      export async function go(): Promise<string> {
        const { deployment }: { deployment: Deployment } = await client.deploy({ mcp_id: 'mcp_1', environment: 'staging' });
        return deployment.status + String(ApiError.name);
      }
    `);
    expect(problems).toEqual([]);
  });

  it('refuse a field the contract does not have', async () => {
    const problems = await compile(`
      import { ApiClient } from 'mcpctl';
      const client = new ApiClient({ baseUrl: 'http://127.0.0.1:47321' });
      export const pending = client.deploy({ mcp_id: 'mcp_1', environment: 'everywhere' });
    `);
    expect(problems.join('\n')).toMatch(/everywhere/);
  });
});
