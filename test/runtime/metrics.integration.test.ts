/**
 * A runtime's own /metrics, as a cluster runs it (`--metrics-port`, set by `mcpctl export
 * kubernetes`): the real serve-bundle from dist/ answers GET /metrics on its own port only, with
 * the MCP operation histogram by method, tool and error type that the exported PrometheusRule reads,
 * in a format `promtool check metrics` (Debian's `prometheus`, which CI installs) accepts. Without
 * the option there is no such port, and /metrics on the server's port is not found.
 */
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BuildRequestInput } from '../../src/api/contract.js';
import { writeBundle } from '../../src/runtime/host/bundle.js';
import { requireBuilt, ROOT } from '../support/app.js';
import { connect } from '../support/runtime.js';
import { tempDir, type TempDir } from '../support/temp.js';

beforeAll(() => requireBuilt());

const SERVER: BuildRequestInput = {
  name: 'weather',
  template: 'custom',
  tools: [
    {
      name: 'forecast',
      description: 'Works, or fails when asked to',
      inputSchema: { type: 'object', properties: { fail: { type: 'boolean' } } },
      handler: { type: 'module', module: 'tools.mjs', export: 'forecast' },
    },
  ],
  files: {
    'tools.mjs': {
      encoding: 'utf8',
      content: 'export const forecast = (args) => { if (args?.fail) throw new Error("no data"); return "sunny"; };\n',
    },
  },
};

const temps: TempDir[] = [];
const stops: Array<() => void> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) stop();
  for (const temp of temps.splice(0)) await temp.cleanup();
});

interface Listening {
  event: string;
  url: string;
  metrics_port?: number;
}

async function serve(args: string[]): Promise<{ listening: Listening; stop(): Promise<number | null> }> {
  const temp = await tempDir('mcpctl-runtime-metrics-');
  temps.push(temp);
  const { dir } = await writeBundle(SERVER, temp.dir);
  const child = spawn(
    process.execPath,
    [join(ROOT, 'dist', 'runtime', 'serve-bundle.js'), '--bundle', dir, '--port', '0', ...args],
    { env: { PATH: process.env.PATH! }, stdio: ['ignore', 'pipe', 'ignore'] },
  );
  stops.push(() => child.kill('SIGKILL'));
  const ended = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const first = await new Promise<string>((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
  return {
    listening: JSON.parse(first) as Listening,
    stop: () => {
      child.kill('SIGTERM');
      return ended;
    },
  };
}

describe('a runtime’s own /metrics (on a cluster)', () => {
  it('counts each call by method, tool and error type, on its own port, in a format promtool accepts', async () => {
    expect(spawnSync('promtool', ['--version']).status, 'promtool is installed (apt-get install prometheus)').toBe(0);
    const served = await serve(['--metrics-port', '0', '--environment', 'staging']);
    expect(served.listening.event).toBe('listening');
    expect(served.listening.metrics_port).toBeGreaterThan(0);
    const metricsUrl = `http://127.0.0.1:${served.listening.metrics_port}/metrics`;
    {
      await using client = await connect(`${served.listening.url}/mcp`);
      for (let i = 0; i < 3; i++) await client.callTool({ name: 'forecast', arguments: {} });
      expect((await client.callTool({ name: 'forecast', arguments: { fail: true } })).isError).toBe(true);
    }
    const answer = await fetch(metricsUrl);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toContain('text/plain');
    const text = await answer.text();
    const of = 'server="weather",environment="staging",mcp_method_name="tools/call",gen_ai_tool_name="forecast"';
    expect(text).toContain(`mcp_server_operation_duration_seconds_count{${of},error_type=""} 3`);
    expect(text).toContain(`mcp_server_operation_duration_seconds_count{${of},error_type="tool_error"} 1`);
    expect(text).toMatch(/mcp_server_operation_duration_seconds_count\{[^}]*mcp_method_name="initialize"[^}]*\} 1/);
    // nothing of what the requests carried, and no deployment label (the pod says which)
    expect(text).not.toContain('no data');
    expect(text).not.toContain('deployment=');
    const checked = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(checked.status, `${checked.stdout}${checked.stderr}`).toBe(0);
    // only /metrics there, and only on that port
    expect((await fetch(`http://127.0.0.1:${served.listening.metrics_port}/mcp`)).status).toBe(404);
    expect((await fetch(`${served.listening.url}/metrics`)).status).toBe(404);
    expect(await served.stop()).toBe(0);
  });

  it('has no metrics port unless asked, and refuses a wrong one', async () => {
    const plain = await serve([]);
    expect(plain.listening.metrics_port).toBeUndefined();
    expect((await fetch(`${plain.listening.url}/metrics`)).status).toBe(404);
    await plain.stop();
    const wrong = await serve(['--metrics-port', '70000']);
    expect(wrong.listening).toMatchObject({
      event: 'start_failed',
      error: '--metrics-port must be a whole number from 0 to 65535',
    });
  });
});
