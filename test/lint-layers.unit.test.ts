/**
 * The import-direction rule of eslint.config.js: a layer of src/ imports only the layers below it
 * (docs/architecture.md). Linted with ESLint's own API on text that is not on disk, with the
 * project's config; type-aware rules are off here since the files do not exist.
 */
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('..', import.meta.url).pathname;
const LAYER_RULES = new Set(['no-restricted-imports', 'no-restricted-syntax']);

const eslint = new ESLint({
  cwd: ROOT,
  overrideConfig: [{ files: ['**/*.ts'], ...tseslint.configs.disableTypeChecked }],
});

/** The layer-rule messages ESLint gives for `text` as if it were the file `path` of the repo. */
async function layerErrors(path: string, text: string): Promise<string[]> {
  const [result] = await eslint.lintText(text, { filePath: `${ROOT}${path}` });
  return (result?.messages ?? [])
    .filter((m) => m.ruleId !== null && LAYER_RULES.has(m.ruleId))
    .map((m) => `${m.ruleId}: ${m.message}`);
}

describe('the import-direction lint', () => {
  it('refuses a definition module that imports the CLI', async () => {
    const errors = await layerErrors(
      'src/definition/wrong-way.ts',
      "import { UserError } from '../cli/errors.js';\nexport const E = UserError;\n",
    );
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^no-restricted-imports: .*src\/definition\/ may import only src\/shared\//);
  });

  it('lets the same module import the shared layer (the control)', async () => {
    expect(
      await layerErrors(
        'src/definition/right-way.ts',
        "import { UserError } from '../shared/errors.js';\nexport const E = UserError;\n",
      ),
    ).toEqual([]);
  });

  it('refuses an upward import() too, and a type-only import', async () => {
    expect(await layerErrors('src/runtime/lazy.ts', "export const load = () => import('../engine/app.js');\n")).toEqual(
      [expect.stringMatching(/^no-restricted-syntax: src\/runtime\/ may import only/)],
    );
    expect(
      await layerErrors(
        'src/api/deep/types.ts',
        "import type { App } from '../../engine/app.js';\nexport type A = App;\n",
      ),
    ).toHaveLength(1);
  });

  it('lets each layer import the layers below it, and the CLI import any', async () => {
    expect(
      await layerErrors(
        'src/engine/x.ts',
        "import { a } from '../runtime/a.js';\nimport { b } from '../api/b.js';\nimport { c } from './c.js';\nexport const x = [a, b, c];\n",
      ),
    ).toEqual([]);
    expect(
      await layerErrors(
        'src/cli/steps/x.ts',
        "import { a } from '../../engine/a.js';\nimport { b } from '../../packaging/b.js';\nexport const x = [a, b];\n",
      ),
    ).toEqual([]);
    expect(
      await layerErrors('src/packaging/x.ts', "import { a } from '../engine/a.js';\nexport const x = a;\n"),
    ).toHaveLength(1);
  });

  it('refuses a command that imports another command', async () => {
    expect(
      await layerErrors(
        'src/cli/commands/x.ts',
        "import { a } from './status.js';\nimport { b } from '../steps/b.js';\nexport const x = [a, b];\n",
      ),
    ).toEqual([expect.stringMatching(/^no-restricted-imports: .*a command may not import another command/)]);
  });
});
