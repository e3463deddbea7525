/**
 * The examples' test cases pass without the internet, on a real engine in a temp MCPCTL_HOME:
 * `everything` on its own, and `weather` against the stand-in Open-Meteo API it ships
 * (examples/weather/stand-in/), chosen by the variables of an env file, not by editing the
 * definition. Only loopback is used. The runtime runs from dist/: `npm run build` first.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../src/engine/engine.js';
import { requireBuilt, ROOT } from '../support/app.js';
import { createSandbox, runCli, type Sandbox } from '../support/cli.js';
import { startRealEngine } from '../support/engine.js';
import { startWeatherStandIn, weatherForStandIn, type WeatherStandIn } from '../support/weather-stand-in.js';

const KEY = 'examples-offline-key-0123456789abcdef';

let sandbox: Sandbox;
let engine: RunningEngine;
let env: Record<string, string>;
let standIn: WeatherStandIn;

beforeAll(async () => {
  requireBuilt();
  sandbox = await createSandbox();
  engine = await startRealEngine(sandbox.env.MCPCTL_HOME!, { apiKey: KEY });
  env = { ...sandbox.env, MCPCTL_API_URL: engine.url, MCPCTL_API_KEY: KEY };
  standIn = await startWeatherStandIn();
  // a copy of the example in ./weather and the shipped ./stand-in.env, pointed at this run's port
  await weatherForStandIn(standIn, sandbox.dir);
}, 60_000);
afterAll(async () => {
  await standIn?.stop();
  await engine?.close(1000);
  await sandbox?.cleanup();
});

describe('examples that pass offline', { timeout: 120_000 }, () => {
  it('everything: its cases use its tools and resources, and pass', async () => {
    const result = await runCli(['--json', 'test', join(ROOT, 'examples', 'everything')], { env, cwd: sandbox.dir });
    expect(result.code, result.stderr).toBe(0);
    const report = result.json<{ passed: boolean; cases: Array<{ name: string; passed: boolean }> }>();
    expect(report.cases.length).toBeGreaterThanOrEqual(8);
    expect(report.cases.filter((c) => !c.passed)).toEqual([]);
  });

  it('weather: its cases pass against the stand-in API, given by --env-file', async () => {
    const result = await runCli(['test', 'weather', '--env-file', 'stand-in.env'], { env, cwd: sandbox.dir });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('3 of 3 cases passed');
    // the stand-in's answers reached the agent
    expect(result.stdout).toContain('"temperature_2m_max"');
    expect(result.stdout).toContain('Lisbon');

    // the values given to a run are not kept with it (they may be secrets)
    const runs = await fetch(`${engine.url}/v1/tests?limit=1`, { headers: { authorization: `Bearer ${KEY}` } });
    const listed = (await runs.json()) as { data: { runs: Array<{ test_id: string }> } };
    const kept = await fetch(`${engine.url}/v1/tests/${listed.data.runs[0]!.test_id}`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    const text = await kept.text();
    expect(kept.status, text).toBe(200);
    expect(text).not.toContain(standIn.url);
  });

  it('weather: --env-var gives a variable from this environment; an unset one is refused before any build', async () => {
    const given = await runCli(
      ['test', 'weather', '--env-var', 'WEATHER_API_URL', '--env-var', 'GEOCODING_API_URL', '-m', 'forecast for Paris'],
      { env: { ...env, WEATHER_API_URL: standIn.url, GEOCODING_API_URL: standIn.url }, cwd: sandbox.dir },
    );
    expect(given.code, given.stdout + given.stderr).toBe(0);
    expect(given.stdout).toContain('"daily"');

    const unset = await runCli(['test', 'weather', '--env-var', 'NOT_SET_ANYWHERE'], { env, cwd: sandbox.dir });
    expect(unset.code).toBe(3);
    expect(unset.stderr).toContain('NOT_SET_ANYWHERE is not set in this environment');
    expect(unset.stderr).not.toContain('building');
  });

  it('weather.production deployed against the stand-in answers `mcpctl call … get_forecast`', async () => {
    const deployed = await runCli(['deploy', 'weather', '-e', 'prod', '--env-file', 'stand-in.env'], {
      env,
      cwd: sandbox.dir,
    });
    expect(deployed.code, deployed.stderr).toBe(0);
    const called = await runCli(
      ['call', 'weather.production', 'get_forecast', '--arg', 'latitude=52.5', '--arg', 'longitude=13.4'],
      { env, cwd: sandbox.dir },
    );
    expect(called.code, called.stderr).toBe(0);
    expect(JSON.parse(called.stdout)).toMatchObject({
      latitude: 52.5,
      longitude: 13.4,
      daily: { temperature_2m_max: [expect.any(Number), expect.any(Number), expect.any(Number)] },
    });
  });
});
