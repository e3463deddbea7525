import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestResult } from '../../src/api/contract.js';
import { checkCase } from '../../src/cli/steps/run-tests.js';
import { escapeXml, toJUnitXml } from '../../src/cli/render/junit.js';
import { runCli, WEATHER_YAML, type Sandbox } from '../support/cli.js';
import { startTestEngine, type TestEngine } from '../support/engine.js';
import { scriptedClaude, scriptedGpt, type Plan } from '../support/models.js';
import { envelope, startProxy, type Proxy } from '../support/proxy.js';
import { startProviderDouble, type ProviderDouble } from '../support/provider-double.js';

let t: TestEngine;
let server: Proxy;
let sandbox: Sandbox;
let env: Record<string, string>;
let mcpId: string;
/** stand-ins for the paid models' APIs; what claude-sonnet-5-5 does is `plan`'s to say */
let anthropic: ProviderDouble;
let openai: ProviderDouble;
let plan: Plan;

// one engine for the file (a build of the same definition is the same server); a new proxy per test
beforeAll(async () => {
  anthropic = await startProviderDouble(scriptedClaude((message) => plan(message)));
  openai = await startProviderDouble(scriptedGpt());
  t = await startTestEngine({
    env: {
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: anthropic.url,
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: openai.url,
    },
  });
  sandbox = t.sandbox;
});
afterAll(async () => {
  await t?.close();
  await anthropic?.close();
  await openai?.close();
});
/** A new recording proxy per case and weather.yaml built through it: for the cases that run the command. */
function withBuiltServer(): void {
  beforeEach(async () => {
    plan = () => [];
    server = await startProxy(t.engine.url);
    env = { ...t.env, MCPCTL_API_URL: server.url };
    await writeFile(join(sandbox.dir, 'weather.yaml'), WEATHER_YAML);
    const built = await runCli(['build', 'weather.yaml', '--quiet'], { env, cwd: sandbox.dir });
    mcpId = built.stdout.trim();
    server.requests.length = 0;
  });
  afterEach(async () => {
    await server.close();
  });
}

/** A message the engine's offline agent (mcpctl-local) answers with get_forecast. */
const FORECAST = 'What is the forecast in Paris? Use get_forecast.';

const test = (args: string[]) => runCli(['test', ...args], { env, cwd: sandbox.dir });
const CLAUDE = ['--model', 'claude-sonnet-5-5'];

/** Calls that fail half the time (the second one's arguments rejected): success rate 0.5. */
function halfFailingAgent() {
  plan = () => [
    { name: 'get_forecast', input: { city: 'Paris' } },
    { name: 'get_forecast', input: {} },
  ];
}

/** POST /v1/test answers `result`, as a service would whose agent did that. */
function serviceAnswers(result: Partial<TestResult>) {
  const whole: TestResult = {
    ai_response: 'Scripted reply',
    tools_used: ['get_forecast'],
    resources_accessed: [],
    execution_time: 0.05,
    success_rate: 1,
    ai_model: 'mcpctl-local',
    tool_calls: [{ name: 'get_forecast', ok: true, duration_ms: 3 }],
    ...result,
  };
  server.inject({ method: 'POST', path: '/v1/test', fault: { type: 'raw', status: 200, body: envelope(whole) } });
}

describe('mcpctl test', () => {
  withBuiltServer();

  it('sends one message by id and prints the reply, tools, resources, time and band', async () => {
    const result = await test([mcpId, '-m', `${FORECAST} And read notes://today`]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/reply\s+\S/);
    expect(result.stdout).toMatch(/tools used\s+get_forecast/);
    expect(result.stdout).toMatch(/resources\s+notes:\/\/today/);
    expect(result.stdout).toMatch(/execution time\s+\d+(\.\d+)? s/);
    expect(result.stdout).toMatch(/success rate\s+100% \(all tool calls worked\)/);
    expect(result.stdout).not.toContain('likely causes');
    expect(result.stdout).toContain('✔ 1 of 1 case passed (threshold 0.8)');
    expect(server.requestsTo('/v1/test')[0]!.body).toEqual({
      mcp_id: mcpId,
      message: `${FORECAST} And read notes://today`,
    });
  });

  it('passes --model and --user-id', async () => {
    const result = await test([mcpId, '-m', 'hi', '--model', 'gpt-5.4-mini', '--user-id', 'bob']);
    expect(result.code).toBe(0);
    expect(server.requestsTo('/v1/test')[0]!.body).toEqual({
      mcp_id: mcpId,
      message: 'hi',
      ai_model: 'gpt-5.4-mini',
      context: { user_id: 'bob' },
    });
  });

  it('runs the file’s cases with their user ids and the file’s threshold', async () => {
    const result = await test(['weather.yaml', '--json']);
    expect(result.code).toBe(0);
    const doc = result.json();
    expect(doc).toMatchObject({ passed: true, mcp_id: mcpId, server: 'weather', threshold: 0.9 });
    expect(doc.cases.map((c: { name: string }) => c.name)).toEqual(['forecast', 'notes']);
    const bodies = server.requestsTo('/v1/test').map((r) => r.body);
    expect(bodies[1]).toMatchObject({ context: { user_id: 'alice' } });
  });

  it('a rate below the threshold is exit 7 and names the cause of this run, not a fixed list', async () => {
    halfFailingAgent();
    const result = await test([mcpId, '-m', 'hi', ...CLAUDE]);
    expect(result.code).toBe(7);
    expect(result.stdout).toMatch(/success rate\s+50% \(some failures\)/);
    expect(result.stdout).toContain(
      'cause failed_calls: get_forecast: 1 of its 2 calls failed; the arguments were rejected by its input schema: Invalid arguments for tool "get_forecast": city is required.',
    );
    expect(result.stdout).not.toContain('similar_descriptions');
    expect(result.stdout).not.toContain('not_understood');
    expect(result.stdout).toContain('✖ success rate 50% is below 80%');
    expect(result.stderr).toContain('error: 1 of 1 test case failed');
  });

  it('--threshold lowers the bar; the causes are still shown', async () => {
    halfFailingAgent();
    const result = await test([mcpId, '-m', 'hi', '--threshold', '0.5', ...CLAUDE]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('cause failed_calls: get_forecast');
  });

  it('a cause names where its tool is defined when the target is a file', async () => {
    halfFailingAgent();
    const result = await test(['weather.yaml', '-m', 'hi', ...CLAUDE]);
    expect(result.code).toBe(7);
    expect(result.stdout).toContain('→ get_forecast is defined at weather.yaml:5:5');
  });

  it('how a call failed is read from its error when the service does not say', async () => {
    serviceAnswers({
      success_rate: 0,
      tool_calls: [
        {
          name: 'get_forecast',
          ok: false,
          error: 'Tool "get_forecast" failed: GET https://api.example.com/forecast answered 503 Service Unavailable',
        },
      ],
    });
    const result = await test([mcpId, '-m', 'hi', '--json']);
    expect(result.code).toBe(7);
    expect(result.json().cases[0].guidance).toEqual({
      band: 'major issues',
      causes: [
        {
          kind: 'failed_calls',
          message: expect.stringContaining(
            'get_forecast: its call failed; the handler failed: its HTTP call answered 503: Tool "get_forecast" failed',
          ),
          tools: ['get_forecast'],
          calls: [0],
        },
      ],
    });
  });

  it('a run that used nothing is not a pass, even when the service reports a rate of 1: exit 7, not_understood', async () => {
    serviceAnswers({ tools_used: [], resources_accessed: [], tool_calls: [], success_rate: 1 });
    const result = await test([mcpId, '-m', 'sing me a song']);
    expect(result.code).toBe(7);
    expect(result.stdout).toMatch(/success rate\s+100% \(major issues\)/);
    expect(result.stdout).toContain('cause not_understood: no tool or resource on this server matched the request');
    expect(result.stdout).toContain('✖ the agent used no tool and no resource, so the case tested nothing');
  });

  it('--expect-tool sets what a message should call: it reaches the service and judges the run', async () => {
    const result = await test([
      mcpId,
      '-m',
      FORECAST,
      '--expect-tool',
      'get_alerts',
      '--expect-tool',
      'get_forecast',
      '--json',
    ]);
    expect(result.code).toBe(7);
    expect(server.requestsTo('/v1/test')[0]!.body).toMatchObject({ expect: { tools: ['get_alerts', 'get_forecast'] } });
    expect(result.json().cases[0].failures).toEqual(['expected the agent to call get_alerts; it did not']);
  });

  it('--expect-tool without --message is a usage error', async () => {
    const result = await test(['weather.yaml', '--expect-tool', 'get_forecast']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--expect-tool goes with --message');
  });

  it('--json carries the guidance of every case', async () => {
    const result = await test(['weather.yaml', '--json']);
    expect(result.code).toBe(0);
    const doc = result.json();
    expect(doc.cases.map((c: { guidance: unknown }) => c.guidance)).toEqual([
      { band: 'all tool calls worked', causes: [] },
      { band: 'all tool calls worked', causes: [] },
    ]);
  });

  it('a failed expectation is exit 7; --json has passed false and every failure; --junit records it', async () => {
    // the model calls no tool; it reads the resource a message names
    plan = (message) =>
      message.includes('notes://today') ? [{ name: 'read_resource', input: { uri: 'notes://today' } }] : [];
    const result = await test(['weather.yaml', '--json', '--junit', 'reports/junit.xml', ...CLAUDE]);
    expect(result.code).toBe(7);
    const doc = result.json();
    expect(doc.passed).toBe(false);
    expect(doc.cases[0].failures).toEqual([
      'the agent used no tool and no resource, so the case tested nothing',
      'expected the agent to call get_forecast; it did not',
    ]);
    expect(doc.cases[0].guidance.causes.map((c: { kind: string }) => c.kind)).toEqual(['not_understood']);
    expect(doc.cases[1].passed).toBe(true);
    const xml = await readFile(join(sandbox.dir, 'reports/junit.xml'), 'utf8');
    expect(xml).toContain('<testsuite name="weather" tests="2" failures="1"');
    expect(xml).toMatch(/<testcase name="forecast" classname="weather" time="\d+\.\d{3}">/);
    expect(xml).toContain(
      '<failure message="the agent used no tool and no resource, so the case tested nothing" type="expectation">',
    );
    // a provider's model (not mcpctl-local) that used nothing: the cause says the agent used nothing
    expect(xml).toContain('not_understood: the agent used no tool and no resource');
    expect(xml).toMatch(/<testcase name="notes"[^>]*>\s*<system-out>/);
  });

  it('--quiet prints only the summary', async () => {
    const result = await test([mcpId, '-m', FORECAST, '--quiet']);
    expect(result.stdout).toBe('1 of 1 case passed (threshold 0.8)\n');
  });

  it('a model the service does not list is a configuration error (exit 3) before anything is built or tested', async () => {
    const result = await test(['weather.yaml', '-m', 'hi', '--model', 'gpt-2']);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(
      'unknown model gpt-2: the service offers mcpctl-local, claude-sonnet-5-5, gpt-5.4-mini, gemini-3.5-flash',
    );
    expect(server.requests.map((r) => r.path)).toEqual(['/v1/models']);
  });

  it('a model whose key the service lacks is exit 3 (configuration) before anything is built, naming the variable; never "retry"', async () => {
    // an engine whose environment has no model key
    const keyless = await startTestEngine();
    const service = await startProxy(keyless.engine.url);
    try {
      await writeFile(join(keyless.sandbox.dir, 'weather.yaml'), WEATHER_YAML);
      const result = await runCli(['test', 'weather.yaml', '-m', 'hi', '--model', 'claude-sonnet-5-5', '--json'], {
        env: { ...keyless.env, MCPCTL_API_URL: service.url },
        cwd: keyless.sandbox.dir,
      });
      expect(result.code).toBe(3);
      expect(result.json().error).toMatchObject({
        code: 'model_not_configured',
        exit_code: 3,
        message: 'the model claude-sonnet-5-5 cannot run: ANTHROPIC_API_KEY is not set where the engine runs',
      });
      expect(result.json().error.hint).toContain('ANTHROPIC_API_KEY');
      expect(result.json().error.hint).not.toContain('retry');
      expect(service.requests.map((r) => r.path)).toEqual(['/v1/models']);
    } finally {
      await service.close();
      await keyless.close();
    }
  });

  it('the model of a file’s tests: section is checked too', async () => {
    await writeFile(
      join(sandbox.dir, 'weather.yaml'),
      WEATHER_YAML.replace('  threshold: 0.9\n', '  threshold: 0.9\n  model: gpt-5.4-mini\n'),
    );
    // a service that lists the model as unavailable without saying why
    const models = [{ id: 'gpt-5.4-mini', available: false, key_variable: 'OPENAI_API_KEY' }];
    server.inject({ path: '/v1/models', fault: { type: 'raw', status: 200, body: envelope({ models }) } });
    const result = await test(['weather.yaml']);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(
      'the model gpt-5.4-mini cannot run: OPENAI_API_KEY is not set where the service runs',
    );
  });

  it('a service that answers model_not_configured for the test itself is exit 3 too', async () => {
    server.inject({
      path: '/v1/test',
      fault: {
        type: 'status',
        status: 501,
        code: 'model_not_configured',
        message: 'the model claude-sonnet-5-5 needs ANTHROPIC_API_KEY in the engine’s environment',
      },
    });
    const result = await test([mcpId, '-m', 'hi', '--model', 'claude-sonnet-5-5']);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('needs ANTHROPIC_API_KEY');
    expect(result.stderr).not.toContain('retry');
  });

  it('a service without GET /v1/models leaves the model to the test request', async () => {
    server.inject({
      path: '/v1/models',
      fault: { type: 'status', status: 404, code: 'not_found', message: 'no route' },
    });
    const result = await test([mcpId, '-m', 'hi', '--model', 'gpt-5.4-mini']);
    expect(result.code).toBe(0);
    expect(server.requestsTo('/v1/test')).toHaveLength(1);
  });

  it('an id without --message is exit 2 with the command to run', async () => {
    const result = await test([mcpId]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`nothing to test: pass --message with ${mcpId}`);
  });

  it('a provider the service cannot reach (503) is exit 4: that one is transient', async () => {
    server.inject({
      path: '/v1/test',
      fault: {
        type: 'status',
        status: 503,
        code: 'unavailable',
        message: 'Anthropic is rate limiting the engine (HTTP 429)',
        retryAfter: '60',
      },
    });
    const result = await test([mcpId, '-m', 'hi', '--model', 'claude-sonnet-5-5']);
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('Anthropic is rate limiting the engine');
    expect(result.stderr).toContain('safe to retry after 1 min');
  });

  it('an unknown server is exit 2 (404)', async () => {
    const result = await test(['mcp_doesnotexist', '-m', 'hi', '--json']);
    expect(result.code).toBe(2);
    expect(result.json().error.code).toBe('not_found');
  });
});

describe('test checks and reports', () => {
  const result = {
    ai_response: 'It is SUNNY in Paris',
    tools_used: ['get_forecast'],
    resources_accessed: ['notes://today'],
    execution_time: 0.2,
    success_rate: 0.75,
  };

  it('a run that used nothing fails whatever its rate, unless the case expects no tool', () => {
    const nothing = { ...result, tools_used: [], resources_accessed: [], tool_calls: [], success_rate: 1 };
    expect(checkCase(nothing, undefined, 0)).toEqual([
      'the agent used no tool and no resource, so the case tested nothing',
    ]);
    expect(checkCase(nothing, { response_contains: ['sunny'] }, 0)).toEqual([
      'the agent used no tool and no resource, so the case tested nothing',
    ]);
    expect(checkCase({ ...nothing, success_rate: 0 }, { tools: [] }, 0.8)).toEqual([]);
    expect(checkCase(result, { tools: [] }, 0.7)).toEqual(['expected no tool call; the agent called get_forecast']);
    // a resource read is a use: the rate decides
    expect(checkCase({ ...nothing, resources_accessed: ['notes://today'] }, undefined, 0.8)).toEqual([]);
  });

  it('checks the rate and each kind of expectation', () => {
    expect(checkCase(result, undefined, 0.7)).toEqual([]);
    expect(checkCase(result, undefined, 0.8)).toEqual(['success rate 75% is below 80%']);
    expect(
      checkCase(
        result,
        {
          tools: ['get_forecast', 'get_alerts'],
          not_tools: ['get_forecast'],
          resources: ['notes://x'],
          response_contains: ['sunny', 'rain'],
        },
        0,
      ),
    ).toEqual([
      'expected the agent to call get_alerts; it did not',
      'the agent called get_forecast, which it should not',
      'expected the agent to read notes://x; it did not',
      'expected the reply to contain "rain"',
    ]);
  });

  it('escapes XML and drops characters XML cannot hold', () => {
    expect(escapeXml(`a<b>&"c"'d'\u0001`)).toBe('a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;');
    const xml = toJUnitXml({ name: 's', timestamp: 't', cases: [{ name: 'x<y', time: 1, failures: [] }] });
    expect(xml).toContain('<testcase name="x&lt;y" classname="s" time="1.000"/>');
    expect(xml).toContain('tests="1" failures="0"');
  });
});
