/**
 * The dashboard's import rule of eslint.config.js: src/ui/ runs in a browser, so it imports nothing
 * of the rest of src/ and nothing of Node. Linted with ESLint's API on text that is not on disk, as
 * test/lint-layers.unit.test.ts does.
 */
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname;

const eslint = new ESLint({
  cwd: ROOT,
  overrideConfig: [{ files: ['**/*.{ts,tsx}'], ...tseslint.configs.disableTypeChecked }],
});

async function importErrors(path: string, text: string): Promise<string[]> {
  const [result] = await eslint.lintText(text, { filePath: `${ROOT}${path}` });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('the dashboard import rule', () => {
  it('refuses an import of the API layer, even of types, from any depth', async () => {
    expect(
      await importErrors(
        'src/ui/x.ts',
        "import type { Deployment } from '../api/operations.js';\nexport type D = Deployment;\n",
      ),
    ).toEqual([expect.stringMatching(/src\/ui\/ may import only src\/ui\//)]);
    expect(
      await importErrors(
        'src/ui/pages/x.ts',
        "import { ENVIRONMENTS } from '../../api/contract.js';\nexport const E = ENVIRONMENTS;\n",
      ),
    ).toHaveLength(1);
    expect(
      await importErrors(
        'src/ui/pages/x.ts',
        "import { startEngine } from '../../engine/engine.js';\nexport const s = startEngine;\n",
      ),
    ).toHaveLength(1);
  });

  it('refuses Node modules', async () => {
    expect(
      await importErrors('src/ui/x.ts', "import { readFile } from 'node:fs/promises';\nexport const r = readFile;\n"),
    ).toEqual([expect.stringMatching(/src\/ui\/ runs in a browser: no Node modules$/)]);
  });

  it('lets it import its own modules and browser packages (the control)', async () => {
    expect(
      await importErrors(
        'src/ui/pages/x.ts',
        "import { getJson } from '../api.js';\nimport { Badge } from '../components/common.js';\nimport uPlot from 'uplot';\nexport const x = [getJson, Badge, uPlot];\n",
      ),
    ).toEqual([]);
  });
});
