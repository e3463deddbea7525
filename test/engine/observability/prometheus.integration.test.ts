/**
 * The Prometheus exposition against real parts (the real runtime from dist/: `npm run build`
 * first; Debian's `prometheus` package for promtool and prometheus, which CI installs): an
 * engine with a production deployment answers tool calls, one of them failing; `promtool check
 * metrics` passes on its /metrics; a Prometheus started here scrapes the engine's own address
 * and the metrics address with the read-only token, and shows the MCP operation histogram of the
 * tool. The token opens /metrics and nothing else, and no request without a credential is answered.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../../src/api/client.js';
import type { BuildRequestInput } from '../../../src/api/contract.js';
import { createLogger } from '../../../src/engine/engine-log.js';
import type { RunningEngine } from '../../../src/engine/engine.js';
import { createSandbox, type Sandbox } from '../../support/cli.js';
import { startRealEngine } from '../../support/engine.js';
import { tempDir, type TempDir } from '../../support/temp.js';
import { waitFor } from '../../support/wait.js';
import { greetAndFail } from '../../support/servers.js';

const API_KEY = 'prometheus-test-key-0123456789abcdef';
const TOKEN = 'prometheus-metrics-token-0123456789abcdef';

/** A static tool that answers, and a module tool whose every call throws. */
const SERVER: BuildRequestInput = greetAndFail('watched');

let sandbox: Sandbox;
let engine: RunningEngine | undefined;
let api: ApiClient | undefined;
let prometheus: ChildProcess | undefined;
let temp: TempDir | undefined;

beforeEach(async () => {
  sandbox = await createSandbox();
});

afterEach(async () => {
  if (prometheus?.pid !== undefined && prometheus.exitCode === null) {
    const exited = new Promise((resolve) => prometheus!.once('exit', resolve));
    process.kill(prometheus.pid, 'SIGTERM');
    await exited;
  }
  prometheus = undefined;
  await api?.close();
  api = undefined;
  await engine?.close(1000);
  engine = undefined;
  await temp?.cleanup();
  temp = undefined;
  await sandbox.cleanup();
});

/** A port free now on loopback, for a program that takes no port 0. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function get(url: string, credential?: string): Promise<{ status: number; type: string | null; text: string }> {
  const response = await fetch(
    url,
    credential === undefined ? {} : { headers: { authorization: `Bearer ${credential}` } },
  );
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

/** A query's vector from Prometheus's HTTP API: each series' labels and value. */
async function query(base: string, expr: string): Promise<Array<{ metric: Record<string, string>; value: number }>> {
  const response = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = (await response.json()) as {
    data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
  };
  return body.data.result.map(({ metric, value }) => ({ metric, value: Number(value[1]) }));
}

describe('the Prometheus exposition', () => {
  it('passes promtool, is scraped by a real Prometheus with the metrics token, and opens nothing else to it', async () => {
    // CI installs Debian's prometheus: without it this test fails rather than pass by skipping
    for (const program of ['promtool', 'prometheus']) {
      expect(spawnSync(program, ['--version']).status, `${program} is installed (apt-get install prometheus)`).toBe(0);
    }
    const lines: string[] = [];
    const logger = createLogger({ write: (line) => lines.push(line) });
    engine = await startRealEngine(sandbox.env.MCPCTL_HOME!, {
      apiKey: API_KEY,
      logger,
      env: { MCPCTL_METRICS_TOKEN: TOKEN, MCPCTL_METRICS_ADDRESS: '127.0.0.1:0' },
    });
    const listening = lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((e) => e.msg === 'metrics listening');
    const metricsUrl = `http://${String(listening?.address)}/metrics`;
    api = new ApiClient({ baseUrl: engine.url, apiKey: API_KEY });

    const server = await api.build(SERVER);
    const { deployment } = await api.deploy({ mcp_id: server.mcp_id, environment: 'production' });
    expect(deployment.status).toBe('deployed');
    const mcp = new Client({ name: 'prometheus-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${deployment.url}/mcp`)));
    const greeted = await Promise.all(
      Array.from({ length: 20 }, (_, i) => mcp.callTool({ name: 'greet', arguments: { name: `n${i}` } })),
    );
    expect(greeted.map((result) => (result.content as Array<{ text?: string }>)[0]?.text)).toContain('Hello n7');
    for (let i = 0; i < 3; i++) expect((await mcp.callTool({ name: 'fail', arguments: {} })).isError).toBe(true);
    await mcp.close();

    // the engine's address takes the API key and the token; the metrics address, the token
    const byKey = await get(`${engine.url}/metrics`, API_KEY);
    expect(byKey.status).toBe(200);
    expect(byKey.type).toContain('text/plain; version=0.0.4');
    expect(byKey.text).toMatch(
      /mcp_server_operation_duration_seconds_count\{[^}]*gen_ai_tool_name="greet",error_type=""\} 20/,
    );
    expect(byKey.text).toMatch(/gen_ai_tool_name="fail",error_type="tool_error"\} 3/);
    expect(byKey.text).toMatch(/mcpctl_instances\{[^}]*state="healthy"\} [1-9]/);
    expect(byKey.text).toMatch(/mcpctl_deployments\{environment="production",status="deployed"\} 1/);
    expect((await get(`${engine.url}/metrics`, TOKEN)).status).toBe(200);
    expect((await get(metricsUrl, TOKEN)).status).toBe(200);

    // attacks: no credential, a wrong one, and the token anywhere but /metrics
    expect((await get(`${engine.url}/metrics`)).status).toBe(401);
    expect((await get(metricsUrl)).status).toBe(401);
    expect((await get(metricsUrl, 'x'.repeat(40))).status).toBe(401);
    expect((await get(`${engine.url}/v1/health`, TOKEN)).status).toBe(401);
    expect((await get(`${engine.url}/v1/deployments`, TOKEN)).status).toBe(401);
    expect((await get(metricsUrl.replace(/\/metrics$/, '/v1/health'), TOKEN)).status).toBe(404);
    const posted = await fetch(metricsUrl, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
    expect([posted.status, posted.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    expect(lines.join('')).not.toContain(TOKEN);

    // promtool's checks and lint of the exposition, from its stdin
    const checked = spawnSync('promtool', ['check', 'metrics'], { input: byKey.text, encoding: 'utf8' });
    expect(`${checked.stdout}${checked.stderr}`.trim()).toBe('');
    expect(checked.status).toBe(0);

    // a real Prometheus scrapes both addresses each second with the token
    temp = await tempDir('mcpctl-prometheus-');
    const tokenFile = join(temp.dir, 'token');
    await writeFile(tokenFile, TOKEN, { mode: 0o600 });
    const config = join(temp.dir, 'prometheus.yml');
    await writeFile(
      config,
      [
        'global: { scrape_interval: 1s, evaluation_interval: 1s }',
        'scrape_configs:',
        ...[
          ['engine', new URL(engine.url).host],
          ['metrics-address', new URL(metricsUrl).host],
        ].flatMap(([job, target]) => [
          `  - job_name: ${job}`,
          `    authorization: { type: Bearer, credentials_file: ${JSON.stringify(tokenFile)} }`,
          `    static_configs: [{ targets: [${JSON.stringify(target)}] }]`,
        ]),
      ].join('\n'),
    );
    const web = `127.0.0.1:${await freePort()}`;
    prometheus = spawn(
      'prometheus',
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${join(temp.dir, 'data')}`,
        `--web.listen-address=${web}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    prometheus.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const base = `http://${web}`;
    const targets = await waitFor(
      'both targets up in Prometheus',
      async () => {
        const response = await fetch(`${base}/api/v1/targets`).catch(() => undefined);
        if (response?.ok !== true) return undefined;
        const body = (await response.json()) as {
          data: { activeTargets: Array<{ health: string; scrapePool: string }> };
        };
        const active = body.data.activeTargets;
        return active.length === 2 && active.every((t) => t.health === 'up') ? active : undefined;
      },
      30_000,
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}; prometheus said: ${stderr}`);
    });
    expect(targets.map((t) => t.scrapePool).sort()).toEqual(['engine', 'metrics-address']);
    const series = await waitFor(
      'the MCP operation histogram of greet in Prometheus',
      async () => {
        const found = await query(base, 'mcp_server_operation_duration_seconds_count{gen_ai_tool_name="greet"}');
        return found.length === 2 ? found : undefined;
      },
      30_000,
    );
    for (const { metric, value } of series) {
      expect(metric).toMatchObject({
        deployment: deployment.deployment_id,
        server: 'watched',
        environment: 'production',
        mcp_method_name: 'tools/call',
      });
      expect(value).toBe(20);
    }
    const failed = await query(
      base,
      'sum(mcp_server_operation_duration_seconds_count{error_type="tool_error"}) by (job)',
    );
    expect(failed.map((s) => s.value)).toEqual([3, 3]);
  });
});
