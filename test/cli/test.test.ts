import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkCase } from '../../src/cli/commands/test.js';
import { escapeXml, toJUnitXml } from '../../src/cli/render/junit.js';
import { scriptedAgent, startContractServer, type ContractServer } from '../support/contract-server.js';
import { createSandbox, runCli, WEATHER_YAML, type Sandbox } from '../support/cli.js';

let server: ContractServer;
let sandbox: Sandbox;
let env: Record<string, string>;
let mcpId: string;

beforeEach(async () => {
  server = await startContractServer();
  sandbox = await createSandbox();
  env = { ...sandbox.env, MCPCTL_API_URL: server.url, MCPCTL_API_KEY: server.apiKey };
  await writeFile(join(sandbox.dir, 'weather.yaml'), WEATHER_YAML);
  const built = await runCli(['build', 'weather.yaml', '--quiet'], { env, cwd: sandbox.dir });
  mcpId = built.stdout.trim();
  server.requests.length = 0;
});
afterEach(async () => {
  await server.close();
  await sandbox.cleanup();
});

const test = (args: string[]) => runCli(['test', ...args], { env, cwd: sandbox.dir });

/** An agent whose calls fail half the time: success rate 0.5. */
function halfFailingAgent() {
  server.options.agent = (request, stored) => ({
    ...scriptedAgent(request, stored),
    success_rate: 0.5,
    tool_calls: [
      { name: 'get_forecast', ok: true, duration_ms: 2 },
      { name: 'get_forecast', ok: false, error: 'city is required', duration_ms: 1 },
    ],
  });
}

describe('mcpctl test', () => {
  it('sends one message by id and prints the reply, tools, resources, time and band', async () => {
    const result = await test([mcpId, '-m', 'What is the weather? notes://today']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/reply\s+Scripted reply to: What is the weather\? notes:\/\/today/);
    expect(result.stdout).toMatch(/tools used\s+get_forecast/);
    expect(result.stdout).toMatch(/resources\s+notes:\/\/today/);
    expect(result.stdout).toMatch(/execution time\s+0\.05 s/);
    expect(result.stdout).toMatch(/success rate\s+100% \(all tool calls worked\)/);
    expect(result.stdout).not.toContain('likely causes');
    expect(result.stdout).toContain('✔ 1 of 1 case passed (threshold 0.8)');
    expect(server.requestsTo('/v1/test')[0]!.body).toEqual({ mcp_id: mcpId, message: 'What is the weather? notes://today' });
  });

  it('passes --model and --user-id', async () => {
    const result = await test([mcpId, '-m', 'hi', '--model', 'gpt-4.1-mini', '--user-id', 'bob']);
    expect(result.code).toBe(0);
    expect(server.requestsTo('/v1/test')[0]!.body).toEqual({ mcp_id: mcpId, message: 'hi', ai_model: 'gpt-4.1-mini', context: { user_id: 'bob' } });
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

  it('a rate below the threshold is exit 7 and lists the likely causes', async () => {
    halfFailingAgent();
    const result = await test([mcpId, '-m', 'hi']);
    expect(result.code).toBe(7);
    expect(result.stdout).toMatch(/success rate\s+50% \(some failures\)/);
    expect(result.stdout).toContain('failed call get_forecast: city is required');
    expect(result.stdout).toContain('likely causes:');
    expect(result.stdout).toContain('tool descriptions too similar');
    expect(result.stdout).toContain('✖ success rate 50% is below 80%');
    expect(result.stderr).toContain('error: 1 of 1 test case failed');
  });

  it('--threshold lowers the bar; the causes are still shown below 1', async () => {
    halfFailingAgent();
    const result = await test([mcpId, '-m', 'hi', '--threshold', '0.5']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('likely causes:');
  });

  it('a rate of 1 with no tool or resource used is flagged as a request not understood', async () => {
    server.options.agent = (request, stored) => ({ ...scriptedAgent(request, stored), tools_used: [], resources_accessed: [], tool_calls: [], success_rate: 1 });
    const result = await test([mcpId, '-m', 'sing me a song']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('no tool or resource was used: the request was not understood (no tool was used), or a needed tool is missing');
    expect(result.stdout).not.toContain('likely causes:');
  });

  it('a failed expectation is exit 7; --json has passed false and every failure; --junit records it', async () => {
    server.options.agent = (request, stored) => ({ ...scriptedAgent(request, stored), tools_used: [], tool_calls: [] });
    const result = await test(['weather.yaml', '--json', '--junit', 'reports/junit.xml']);
    expect(result.code).toBe(7);
    const doc = result.json();
    expect(doc.passed).toBe(false);
    expect(doc.cases[0].failures).toEqual(['expected the agent to call get_forecast; it did not']);
    expect(doc.cases[1].passed).toBe(true);
    const xml = await readFile(join(sandbox.dir, 'reports/junit.xml'), 'utf8');
    expect(xml).toContain('<testsuite name="weather" tests="2" failures="1"');
    expect(xml).toContain('<testcase name="forecast" classname="weather" time="0.050">');
    expect(xml).toContain('<failure message="expected the agent to call get_forecast; it did not" type="expectation">');
    expect(xml).toMatch(/<testcase name="notes"[^>]*>\s*<system-out>/);
  });

  it('--quiet prints only the summary', async () => {
    const result = await test([mcpId, '-m', 'hi', '--quiet']);
    expect(result.stdout).toBe('1 of 1 case passed (threshold 0.8)\n');
  });

  it('a model the service does not offer is its 422, exit 2, naming the field', async () => {
    const result = await test([mcpId, '-m', 'hi', '--model', 'gpt-2']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('ai_model');
    expect(server.requests.filter((r) => r.path === '/v1/test')).toHaveLength(1);
  });

  it('an id without --message is exit 2 with the command to run', async () => {
    const result = await test([mcpId]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`nothing to test: pass --message with ${mcpId}`);
  });

  it('a model the service cannot reach (503) is exit 4', async () => {
    server.inject({ path: '/v1/test', failure: { type: 'status', status: 503, code: 'unavailable', message: 'ANTHROPIC_API_KEY is not set on the service', retryAfter: '60' } });
    const result = await test([mcpId, '-m', 'hi', '--model', 'claude-sonnet-4-5']);
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('ANTHROPIC_API_KEY is not set on the service');
    expect(result.stderr).toContain('safe to retry after 60 s');
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

  it('checks the rate and each kind of expectation', () => {
    expect(checkCase(result, undefined, 0.7)).toEqual([]);
    expect(checkCase(result, undefined, 0.8)).toEqual(['success rate 75% is below 80%']);
    expect(
      checkCase(
        result,
        { tools: ['get_forecast', 'get_alerts'], not_tools: ['get_forecast'], resources: ['notes://x'], response_contains: ['sunny', 'rain'] },
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
