import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The layers of src/, lowest first, and what each may import (docs/architecture.md). cli/ sits on
 * top and may import any layer; what is not named here (node:, npm packages, files of the same
 * layer) is always allowed.
 */
export const LAYERS = {
  shared: [],
  definition: ['shared'],
  api: ['definition', 'shared'],
  runtime: ['api', 'definition', 'shared'],
  packaging: ['runtime', 'api', 'definition', 'shared'],
  engine: ['packaging', 'runtime', 'api', 'definition', 'shared'],
  cli: ['engine', 'packaging', 'runtime', 'api', 'definition', 'shared'],
};

/** One config per layer: importing a layer that is not below it is an error, statically or with import(). */
function layerRules() {
  const names = Object.keys(LAYERS);
  return names
    .map((layer) => {
      const forbidden = names.filter((other) => other !== layer && !LAYERS[layer].includes(other));
      if (forbidden.length === 0) return undefined;
      // a relative path that climbs out of the layer into a forbidden one: '../cli/errors.js', '../../engine/x.js'
      const regex = `^(\\.\\./)+(${forbidden.join('|')})(/|$)`;
      const message = `src/${layer}/ may import only ${LAYERS[layer].map((l) => `src/${l}/`).join(', ') || 'node: and npm packages'} (see docs/architecture.md)`;
      return {
        files: [`src/${layer}/**/*.ts`],
        rules: {
          'no-restricted-imports': ['error', { patterns: [{ regex, message }] }],
          // esquery ends a regex at the first slash: the same pattern with \x2F for '/'
          'no-restricted-syntax': [
            'error',
            { selector: `ImportExpression[source.value=/${regex.replaceAll('/', '\\x2F')}/]`, message },
          ],
        },
      };
    })
    .filter((config) => config !== undefined);
}

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      'coverage/',
      'schema/',
      'templates/',
      'examples/**/*.{js,mjs,cjs,ts,mts,cts}',
      'test/fixtures/**/*.mjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['*.js', 'bin/*.cjs', 'scripts/*.js', 'bench/*.js'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/require-await': 'off',
      'no-console': 'error',
    },
  },
  {
    files: ['**/*.js'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
  {
    // the binary, CommonJS as the bundle it runs
    files: ['bin/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Only the output module and the entry point write to the terminal.
    files: ['test/**', 'bench/**', 'scripts/**', 'src/cli/output.ts', 'src/cli/entry.ts'],
    rules: { 'no-console': 'off' },
  },
  ...layerRules(),
  {
    // The dashboard runs in a browser, bundled on its own (rolldown.ui.config.js), checked with its own
    // tsconfig (DOM, JSX). It imports no other part of src/ (it declares the answers it reads in
    // src/ui/api-types.ts) and nothing of Node: such code would either fail in the browser or pull the
    // CLI's dependencies into the page.
    files: ['src/ui/**/*.{ts,tsx}'],
    languageOptions: {
      parserOptions: { projectService: false, project: './tsconfig.ui.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^(\\.\\./)+(${Object.keys(LAYERS).join('|')})(/|$)`,
              message:
                'src/ui/ may import only src/ui/ and browser packages (declare API types in src/ui/api-types.ts)',
            },
            { regex: '^node:', message: 'src/ui/ runs in a browser: no Node modules' },
          ],
        },
      ],
    },
  },
  {
    // A command never imports another command: what two commands share lives in src/cli/steps.
    files: ['src/cli/commands/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\./|/commands/',
              message: 'a command may not import another command: move what they share to src/cli/steps/',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
