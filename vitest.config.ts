import { defineConfig } from 'vitest/config';

/**
 * Three tiers, named in each test file's name, next to the area it tests:
 * - `*.unit.test.ts`: in-process only, no socket and no child process (test/support/unit-guard.ts
 *   fails a test that tries); the whole tier runs in seconds: `npm run test:fast`.
 * - `*.integration.test.ts`: real loopback sockets and real processes (engine, runtimes, instances)
 *   driven from the test.
 * - `*.e2e.test.ts`: the built `mcpctl` binary and its background engine, as a user runs them.
 * `npm test` runs all three; test/tiers.unit.test.ts checks that every test file is in exactly one.
 * Unit files share their worker's module cache (`isolate: false`): they change no global state,
 * and loading zod, yaml and the TypeScript compiler once per worker rather than once per file
 * makes the tier about three times faster.
 */
export const TIERS = {
  unit: 'test/**/*.unit.test.ts',
  integration: 'test/**/*.integration.test.ts',
  e2e: 'test/**/*.e2e.test.ts',
} as const;

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: [TIERS.unit], setupFiles: ['test/support/unit-guard.ts'], isolate: false },
      },
      { extends: true, test: { name: 'integration', include: [TIERS.integration] } },
      { extends: true, test: { name: 'e2e', include: [TIERS.e2e] } },
    ],
  },
});
