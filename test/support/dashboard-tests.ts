/**
 * What the dashboard's browser tests share: Debian's chromium for the file, and per test a sandbox
 * the built `mcpctl` runs in, whose engine is stopped (by its pid too) and whose folder goes after it.
 * Call once at the top of a test file; it registers its hooks there.
 */
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { BIN, killEngineOf, requireBuilt } from './app.js';
import { startChromium, type ChromiumHandle } from './browser.js';
import { createSandbox, runBin, type BinResult, type Sandbox } from './cli.js';

export interface DashboardTests {
  /** the browser of this file (started before its first test) */
  chromium: () => ChromiumHandle;
  /** a new sandbox for this test (CI=true: nothing asks, nothing opens) */
  sandbox: () => Promise<Sandbox>;
  /** the built mcpctl in this test's sandbox */
  mcpctl: (args: string[]) => Promise<BinResult>;
  /** the JSON a successful command printed */
  json: <T>(result: BinResult) => T;
}

export function useDashboardTests(): DashboardTests {
  let chromium: ChromiumHandle | undefined;
  let box: Sandbox | undefined;
  beforeAll(async () => {
    requireBuilt();
    chromium = await startChromium();
  }, 60_000);
  afterAll(async () => {
    await chromium?.close();
  });
  afterEach(async () => {
    if (box === undefined) return;
    await runBin(BIN, ['engine', 'stop'], { env: box.env, cwd: box.dir });
    killEngineOf(box.env.MCPCTL_HOME!);
    await box.cleanup();
    box = undefined;
  });
  return {
    chromium: () => chromium!,
    sandbox: async () => (box = await createSandbox({ CI: 'true' })),
    mcpctl: (args) => runBin(BIN, args, { env: box!.env, cwd: box!.dir }),
    json: <T>(result: BinResult): T => {
      expect(result.code, result.stderr).toBe(0);
      return JSON.parse(result.stdout) as T;
    },
  };
}
