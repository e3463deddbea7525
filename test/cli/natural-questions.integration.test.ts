/**
 * `mcpctl test` with the offline agent on questions as people ask them, on a real engine in a
 * temp MCPCTL_HOME: the calculator's in words and with symbols, the weather's about tomorrow and
 * the weekend (against the stand-in Open-Meteo API on loopback), and a request beyond the
 * planner, whose cause is the planner's and not a tool the server lacks. The runtime runs from
 * dist/: `npm run build` first.
 */
import { appendFile, cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../src/engine/engine.js';
import { requireBuilt, ROOT } from '../support/app.js';
import { createSandbox, runCli, type Sandbox } from '../support/cli.js';
import { startRealEngine } from '../support/engine.js';
import { startWeatherStandIn, weatherForStandIn, type WeatherStandIn } from '../support/weather-stand-in.js';

const KEY = 'natural-questions-key-0123456789abcdef';

/** The calculator's questions, each with the tool it needs and a part of the right answer. */
const CALCULATOR: Array<[string, string, string]> = [
  ['What is 2 plus 3?', 'evaluate', '5'],
  ['Add 2 and 3', 'evaluate', '5'],
  ['What is the square root of 16?', 'evaluate', '4'],
  ['What is the average of 3, 5 and 10?', 'statistics', '6'],
  ['Convert 100 fahrenheit to celsius', 'convert', '37.7'],
  ['How many km is 10 miles?', 'convert', '16.09'],
  ['2 + 3', 'evaluate', '5'],
  ['convert 100 f to c', 'convert', '37.7'],
  ['What is 12 times 7?', 'evaluate', '84'],
  ['What is ten minus two?', 'evaluate', '8'],
  ['What is the sum of 4, 8 and 15?', 'statistics', '27'],
  ['How many pounds is 5 kg?', 'convert', '11.02'],
];

let sandbox: Sandbox;
let engine: RunningEngine;
let env: Record<string, string>;
let standIn: WeatherStandIn;

/** A case of `tests.cases`, appended to a copied example (its cases come last in the file). */
function caseYaml(name: string, message: string, tools: string[], contains?: string): string {
  const expectContains = contains === undefined ? '' : `, response_contains: [${JSON.stringify(contains)}]`;
  return (
    `    - name: ${JSON.stringify(name)}\n      message: ${JSON.stringify(message)}\n` +
    `      expect: { tools: [${tools.join(', ')}]${expectContains} }\n`
  );
}

beforeAll(async () => {
  requireBuilt();
  sandbox = await createSandbox();
  engine = await startRealEngine(sandbox.env.MCPCTL_HOME!, { apiKey: KEY });
  env = { ...sandbox.env, MCPCTL_API_URL: engine.url, MCPCTL_API_KEY: KEY };
  standIn = await startWeatherStandIn();

  // the calculator with one case per question, in place of its own
  const calculator = join(sandbox.dir, 'calculator');
  await cp(join(ROOT, 'examples', 'calculator'), calculator, { recursive: true });
  const definition = await readFile(join(calculator, 'server.yaml'), 'utf8');
  const cases = CALCULATOR.map(([message, tool, answer], i) => caseYaml(`q${i + 1}`, message, [tool], answer));
  await writeFile(
    join(calculator, 'server.yaml'),
    `${definition.slice(0, definition.indexOf('tests:'))}tests:\n  cases:\n${cases.join('')}`,
  );

  // the weather, its egress and env file pointed at this run's stand-in, with the two questions added
  const { weatherDir: weather } = await weatherForStandIn(standIn, sandbox.dir);
  await appendFile(
    join(weather, 'server.yaml'),
    caseYaml('tomorrow', 'weather in Berlin tomorrow', ['find_location', 'get_forecast'], 'temperature_2m_max') +
      caseYaml(
        'the weekend',
        'Will it rain in Paris this weekend?',
        ['find_location', 'get_forecast'],
        'precipitation_sum',
      ),
  );
}, 60_000);

afterAll(async () => {
  await standIn?.stop();
  await engine?.close(1000);
  await sandbox?.cleanup();
});

describe('questions as people ask them, offline', { timeout: 180_000 }, () => {
  it('calculator: every question calls the right tool and gets the right answer', async () => {
    const result = await runCli(['test', 'calculator'], { env, cwd: sandbox.dir });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain(`${CALCULATOR.length} of ${CALCULATOR.length} cases passed`);
    expect(result.stdout).not.toContain('missing_tool');
  });

  it('calculator: a question given with -m passes, with the arguments read from its words', async () => {
    const result = await runCli(['test', 'calculator', '-m', 'How many km is 10 miles?', '--expect-tool', 'convert'], {
      env,
      cwd: sandbox.dir,
    });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('"from":"mi"');
    expect(result.stdout).toContain('"to":"km"');
  });

  it('weather: tomorrow and this weekend ask for the forecast, of the place found first', async () => {
    const result = await runCli(['test', 'weather', '--env-file', 'stand-in.env'], { env, cwd: sandbox.dir });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('5 of 5 cases passed');
  });

  it('a request beyond the planner names the planner, not a tool the server lacks', async () => {
    const result = await runCli(['test', 'calculator', '-m', 'Convert 3 light years to km'], {
      env,
      cwd: sandbox.dir,
    });
    expect(result.code, result.stdout + result.stderr).toBe(7);
    expect(result.stdout).toContain('cause planner_unmapped: mcpctl-local could not map the request');
    expect(result.stdout).toContain('--model');
    expect(result.stdout).not.toContain('missing_tool');
  });
});
