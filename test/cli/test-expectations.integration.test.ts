/**
 * What a case checks beyond the tools called, through the real engine and its offline agent: the
 * arguments of the calls (a right expectation passes, a wrong one fails naming the key), the
 * precision and recall of tool selection in --json, and the reply scored by the offline judge.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { startTestEngine, type TestEngine } from '../support/engine.js';

let t: TestEngine;

beforeAll(async () => {
  t = await startTestEngine();
});
afterAll(async () => {
  await t?.close();
});

const UNITS = '[m, km, mi, ft, in, kg, g, lb, oz, c, f, k]';

/** A converter with the calculator's input schema and a fixed answer: the agent's arguments are the point. */
function definition(cases: string): string {
  return `name: converter
template: basic
tools:
  - name: convert
    description: Converts a value between units of length, mass or temperature (c, f, k).
    inputSchema:
      type: object
      properties:
        value: { type: number, description: the amount to convert }
        from: { type: string, enum: ${UNITS}, description: the unit the amount is in }
        to: { type: string, enum: ${UNITS}, description: the unit wanted }
      required: [value, from, to]
    handler:
      type: static
      content:
        - type: text
          text: "{{args.value}} {{args.from}} is 37.78 {{args.to}}"
  - name: evaluate
    description: Evaluates an arithmetic expression such as 2 + 3.
    inputSchema:
      type: object
      properties:
        expression: { type: string, description: the arithmetic expression }
      required: [expression]
    handler:
      type: static
      content:
        - type: text
          text: "5"
tests:
  cases:
${cases}`;
}

const MESSAGE = 'convert 100 f to c';

async function testFile(cases: string, ...flags: string[]) {
  await writeFile(join(t.sandbox.dir, 'converter.yaml'), definition(cases));
  return runCli(['test', 'converter.yaml', '--json', ...flags], { env: t.env, cwd: t.sandbox.dir });
}

describe('expected calls and their arguments', () => {
  it('a case whose arguments match passes, with precision and recall in --json', async () => {
    const result = await testFile(`    - name: right arguments
      message: ${MESSAGE}
      expect:
        calls:
          - tool: convert
            args: { value: { approx: 100, within: 0.5 }, from: f, to: { match: "/^c$/i" } }
        reply: [says 37.78]
`);
    expect(result.code, result.stderr).toBe(0);
    const [run] = result.json().cases;
    expect(run).toMatchObject({ passed: true, failures: [] });
    expect(run.result.tool_calls[0]).toMatchObject({
      name: 'convert',
      arguments: { value: 100, from: 'f', to: 'c' },
    });
    expect(run.result.evaluation).toMatchObject({
      precision: 1,
      recall: 1,
      calls: [{ tool: 'convert', matched: true, call: 0 }],
      reply: { judge: 'mcpctl-local', criteria: [{ criterion: 'says 37.78', passed: true }] },
    });
  });

  it('a case whose arguments differ fails (exit 7), naming the call and the key, expected and got', async () => {
    const result = await testFile(`    - name: wrong arguments
      message: ${MESSAGE}
      expect:
        tools: [convert, evaluate]
        calls:
          - tool: convert
            args: { value: 100, from: c, to: f }
`);
    expect(result.code).toBe(7);
    const [run] = result.json().cases;
    expect(run.passed).toBe(false);
    expect(run.failures).toContain(
      'expected call 1 (convert): call 1 of the run differs: args.from expected "c", got "f"; args.to expected "f", got "c"',
    );
    expect(run.result.evaluation).toMatchObject({ precision: 1, recall: 0.5, missed_tools: ['evaluate'] });
  });

  it('people see the differing key, the tool selection and the criteria met', async () => {
    await writeFile(
      join(t.sandbox.dir, 'converter.yaml'),
      definition(`    - name: wrong value
      message: ${MESSAGE}
      expect:
        calls: [{ tool: convert, args: { value: { approx: 212, within: 1 } } }]
        reply: [mentions kelvin]
`),
    );
    const result = await runCli(['test', 'converter.yaml'], { env: t.env, cwd: t.sandbox.dir });
    expect(result.code).toBe(7);
    expect(result.stdout).toMatch(/tool selection\s+precision 100%, recall 100%/);
    expect(result.stdout).toMatch(/expected calls\s+0 of 1 matched/);
    expect(result.stdout).toMatch(/reply criteria\s+0 of 1 met \(judge mcpctl-local\)/);
    expect(result.stdout).toContain('args.value expected 212 ± 1, got 100');
    expect(result.stdout).toContain('the reply does not meet "mentions kelvin" (mcpctl-local: the reply lacks kelvin)');
  });

  it('a mistyped argument form is a definition error at its line, before anything runs', async () => {
    const result = await testFile(`    - name: mistyped
      message: ${MESSAGE}
      expect:
        calls: [{ tool: convert, args: { to: { match: celsius } } }]
`);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('"celsius" is not a pattern');
    expect(result.stderr).toContain('converter.yaml:');
  });
});
