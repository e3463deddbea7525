/**
 * Evals over repeated runs, on a real engine in a temp MCPCTL_HOME, offline with mcpctl-local:
 * `--runs` gives each case its pass rate, the runs are grouped per model, and `--compare` (with
 * `--fail-on-regression`) names a case whose success rate dropped since the previous run of the
 * same file. Only loopback is used. The runtime runs from dist/: `npm run build` first.
 */
import { cp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../src/engine/engine.js';
import { requireBuilt, ROOT } from '../support/app.js';
import { createSandbox, runCli, type Sandbox } from '../support/cli.js';
import { startRealEngine } from '../support/engine.js';

const KEY = 'test-runs-key-0123456789abcdef0123';

let sandbox: Sandbox;
let engine: RunningEngine;
let env: Record<string, string>;

beforeAll(async () => {
  requireBuilt();
  sandbox = await createSandbox();
  engine = await startRealEngine(sandbox.env.MCPCTL_HOME!, { apiKey: KEY });
  env = { ...sandbox.env, MCPCTL_API_URL: engine.url, MCPCTL_API_KEY: KEY };
  await cp(join(ROOT, 'examples', 'calculator'), join(sandbox.dir, 'calculator'), { recursive: true });
});
afterAll(async () => {
  await engine?.close(1000);
  await sandbox?.cleanup();
});

const mcpctl = (args: string[]) => runCli(args, { env, cwd: sandbox.dir });

/**
 * A forecast server whose case only asks that get_forecast is called (threshold 0): the second
 * version's tool fails (its API is a closed loopback port), so the case still passes but its
 * success rate drops from 100% to 0%.
 */
function forecastServer(version: 1 | 2): string {
  const handler =
    version === 1
      ? 'handler: { type: static, content: [{ type: text, text: Sunny }] }'
      : 'handler: { type: http, url: "http://127.0.0.1:9/forecast?city={{args.city}}", timeout_ms: 2000 }';
  return `name: forecast
template: basic
egress: { allow: ["127.0.0.1:9"] }
tools:
  - name: get_forecast
    description: Get the weather forecast for a city
    inputSchema:
      type: object
      properties:
        city: { type: string, description: the city }
      required: [city]
    ${handler}
tests:
  threshold: 0
  cases:
    - name: forecast
      message: What is the forecast in Paris? Use get_forecast.
      expect:
        tools: [get_forecast]
`;
}

describe('repeated runs and models', () => {
  it('--runs 3 --json gives each case its pass rate and spread over three runs, grouped per model', async () => {
    const result = await mcpctl(['test', 'calculator', '--runs', '3', '--model', 'mcpctl-local', '--json']);
    expect(result.code).toBe(0);
    const doc = result.json();
    expect(doc).toMatchObject({ passed: true, runs: 3, pass_rate: 1 });
    expect(doc.cases.map((c: { name: string; run: number }) => [c.name, c.run])).toEqual([
      ['arithmetic', 1],
      ['arithmetic', 2],
      ['arithmetic', 3],
    ]);
    expect(doc.models).toHaveLength(1);
    expect(doc.models[0]).toMatchObject({ ai_model: 'mcpctl-local', passed_cases: 1, pass_rate: 1 });
    expect(doc.models[0].cases[0]).toMatchObject({
      name: 'arithmetic',
      runs: 3,
      passed_runs: 3,
      pass_rate: 1,
      passed: true,
      success_rate: { mean: 1, min: 1, max: 1, stddev: 0 },
    });
  });

  it('shows a table per model for people, and a model named twice runs once', async () => {
    const result = await mcpctl([
      'test',
      'calculator',
      '--runs',
      '2',
      '--model',
      'mcpctl-local',
      '--model',
      'mcpctl-local',
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('mcpctl-local: 1 of 1 passed');
    expect(result.stdout).toMatch(/✔\s+arithmetic\s+2 of 2 \(100%\)\s+100%/);
    expect(result.stdout).toContain('1 of 1 case passed (threshold 0.8, 2 runs each, pass rate 100%)');
  });

  it('--runs out of range is refused before anything runs (exit 2)', async () => {
    const result = await mcpctl(['test', 'calculator', '--runs', '21']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--runs must be at most 20');
  });
});

describe('comparing runs of a suite', () => {
  it('--compare names the case whose success rate dropped since the previous run of the file', async () => {
    const file = join(sandbox.dir, 'forecast.yaml');
    await writeFile(file, forecastServer(1));
    const first = await mcpctl(['test', 'forecast.yaml', '--compare', '--json']);
    expect(first.code).toBe(0);
    expect(first.json().comparison).toMatchObject({ regressions: 0 });
    expect(first.json().comparison.previous).toBeUndefined();

    await writeFile(file, forecastServer(2));
    const shown = await mcpctl(['test', 'forecast.yaml', '--compare']);
    // the case passes (threshold 0): without --fail-on-regression the drop is shown, not a failure
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('Since the previous run');
    expect(shown.stdout).toMatch(/forecast\s+mcpctl-local\s+100% → 100%\s+100% → 0%\s+regressed/);
  });

  it('--fail-on-regression exits 7 when a case got worse since the previous run, kept without --compare', async () => {
    const file = join(sandbox.dir, 'gate.yaml');
    await writeFile(file, forecastServer(1));
    expect((await mcpctl(['test', 'gate.yaml'])).code).toBe(0);
    await writeFile(file, forecastServer(2));
    const gated = await mcpctl(['test', 'gate.yaml', '--fail-on-regression', '--json']);
    expect(gated.code).toBe(7);
    const doc = gated.json();
    expect(doc).toMatchObject({ passed: false, regressed: true });
    expect(doc.comparison.regressions).toBe(1);
    expect(doc.comparison.changes[0]).toMatchObject({
      name: 'forecast',
      ai_model: 'mcpctl-local',
      change: 'regressed',
      before: { pass_rate: 1, mean_success_rate: 1 },
      now: { pass_rate: 1, mean_success_rate: 0 },
    });
    const told = await mcpctl(['test', 'gate.yaml', '--fail-on-regression']);
    // compared with the run just before, which had dropped already: nothing regressed since
    expect(told.code).toBe(0);
  });

  it('up --fail-on-regression deploys nothing when a case got worse since the last run of the file', async () => {
    const file = join(sandbox.dir, 'up-gate.yaml');
    await writeFile(file, forecastServer(1));
    expect((await mcpctl(['test', 'up-gate.yaml'])).code).toBe(0);
    await writeFile(file, forecastServer(2));
    const up = await mcpctl(['up', 'up-gate.yaml', '--fail-on-regression', '--json']);
    expect(up.code).toBe(7);
    const doc = up.json();
    expect(doc).toMatchObject({ ok: false, exit_code: 7, failed_step: 'test' });
    const test = doc.steps.find((s: { step: string }) => s.step === 'test');
    expect(test.error.message).toMatch(
      /^1 case regressed since the previous run, so forecast was not deployed: forecast/,
    );
    expect(doc.steps.find((s: { step: string }) => s.step === 'deploy').status).toBe('skipped');
  });

  it('--compare with --message is refused before anything is built (exit 2)', async () => {
    const result = await mcpctl(['test', 'calculator', '-m', 'What is 2 + 3?', '--compare']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--compare compares runs of a definition file's tests: cases");
  });
});
