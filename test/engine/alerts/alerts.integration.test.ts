/**
 * Alerts against real parts (the real runtime from dist/: `npm run build` first): an engine whose
 * settings file points a webhook channel at a receiver on loopback, a production deployment with
 * the rule "error rate above 50% for 30 s" and a tool that fails when asked. Failing calls make the
 * receiver get a signed "firing" message within a minute, and not before the 30 s have passed;
 * successful calls then make it get a "resolved" one. The listing (GET /v1/alerts, `mcpctl
 * alerts`) shows the pending, firing and resolved alert, and the deploy no longer says it is not watched.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../../src/api/client.js';
import type { BuildRequestInput } from '../../../src/api/contract.js';
import { createLogger } from '../../../src/engine/engine-log.js';
import type { RunningEngine } from '../../../src/engine/engine.js';
import { createSandbox, runCli, type Sandbox } from '../../support/cli.js';
import { startRealEngine } from '../../support/engine.js';
import { waitFor } from '../../support/wait.js';

const API_KEY = 'alerts-test-key-0123456789abcdef';
const SECRET = 'alerts-webhook-secret-0123456789';

/** A module tool that fails when its call says so. */
const SERVER: BuildRequestInput = {
  name: 'watched',
  template: 'custom',
  tools: [
    {
      name: 'work',
      description: 'Works, or fails when asked to',
      inputSchema: { type: 'object', properties: { fail: { type: 'boolean' } } },
      handler: { type: 'module', module: 'work.mjs', export: 'work' },
    },
  ],
  files: {
    'work.mjs': {
      encoding: 'utf8',
      content: 'export const work = (args) => { if (args?.fail) throw new Error("out of order"); return "done"; };\n',
    },
  },
};

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
  json: { status: string; deployment: { id: string }; alerts: Array<{ rule: string; state: string; summary: string }> };
}

let sandbox: Sandbox;
let engine: RunningEngine | undefined;
let api: ApiClient | undefined;
let receiver: Server | undefined;

beforeEach(async () => {
  sandbox = await createSandbox();
});

afterEach(async () => {
  await api?.close();
  api = undefined;
  await engine?.close(1000);
  engine = undefined;
  if (receiver !== undefined) await new Promise((resolve) => receiver!.close(resolve));
  receiver = undefined;
  await sandbox.cleanup();
});

/** A webhook receiver on loopback that keeps what it gets. */
async function startReceiver(): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({ headers: req.headers, body, json: JSON.parse(body) as Received['json'] });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
  const { port } = receiver.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/hook`, received };
}

/** What a receiver does: HMAC-SHA256 of `<timestamp>.<body>` with the shared secret, compared in constant time. */
function signatureVerifies(message: Received): boolean {
  const timestamp = String(message.headers['x-mcpctl-timestamp']);
  const expected = `sha256=${createHmac('sha256', SECRET).update(`${timestamp}.${message.body}`).digest('hex')}`;
  const given = Buffer.from(String(message.headers['x-mcpctl-signature']));
  return given.length === expected.length && timingSafeEqual(given, Buffer.from(expected));
}

describe('alerts', () => {
  it('sends a signed firing message while a tool fails and a resolved one once it works', async () => {
    const { url, received } = await startReceiver();
    await mkdir(sandbox.env.MCPCTL_HOME!, { recursive: true, mode: 0o700 });
    await writeFile(
      join(sandbox.env.MCPCTL_HOME!, 'engine-settings.json'),
      JSON.stringify({
        alerts: { channels: [{ type: 'webhook', name: 'ops', url, secret_env: 'OPS_WEBHOOK_SECRET' }] },
        tuning: { alert_interval: 0.5 },
      }),
    );
    const lines: string[] = [];
    engine = await startRealEngine(sandbox.env.MCPCTL_HOME!, {
      apiKey: API_KEY,
      logger: createLogger({ write: (line) => lines.push(line) }),
      env: { OPS_WEBHOOK_SECRET: SECRET },
    });
    api = new ApiClient({ baseUrl: engine.url, apiKey: API_KEY });
    const server = await api.build(SERVER);
    const rule = { type: 'error_rate', above: 50, window: '30s', for: '30s' } as const;
    const { deployment } = await api.deploy({
      mcp_id: server.mcp_id,
      environment: 'production',
      config: { alerts: [rule] },
    });
    expect(deployment.status).toBe('deployed');
    expect(JSON.stringify(deployment.notices)).not.toContain('no alerting');

    const mcp = new Client({ name: 'alerts-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${deployment.url}/mcp`)));
    // a call every 100 ms: a client's steady traffic, not a flood
    let calls = 0;
    const call = async (fail: boolean) => {
      await sleep(100);
      calls += 1;
      return mcp.callTool({ name: 'work', arguments: { fail } });
    };
    // a wait that runs out says what the receiver got, what the engine lists and what it logged
    let started = 0;
    const explain = async (error: unknown): Promise<never> => {
      const listing = JSON.stringify(await api!.alerts().catch(String));
      const got = JSON.stringify(received.map((m) => m.json.status));
      const times = `${calls} calls, the first failing one ${started === 0 ? '-' : new Date(started).toISOString()}, now ${new Date().toISOString()}`;
      throw new Error(
        `${String(error)}; ${times}; received ${got}; listed ${listing}; log:\n${lines.slice(-20).join('\n')}`,
      );
    };
    started = Date.now();
    const firing = await waitFor(
      'a firing message at the receiver',
      async () => {
        expect((await call(true)).isError).toBe(true);
        return received.find((m) => m.json.status === 'firing');
      },
      60_000,
    ).catch(explain);
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(30_000);
    expect(signatureVerifies(firing)).toBe(true);
    expect(Math.abs(Number(firing.headers['x-mcpctl-timestamp']) * 1000 - Date.now())).toBeLessThan(60_000);
    expect(firing.json.deployment.id).toBe(deployment.deployment_id);
    expect(firing.json.alerts).toMatchObject([{ rule: 'error_rate', state: 'firing' }]);
    expect(firing.json.alerts[0]!.summary).toMatch(/\d+% of \d+ requests failed in the last 30s/);
    const listed = await api.alerts(deployment.deployment_id);
    expect(listed.firing.map((a) => a.rule)).toEqual(['error_rate']);
    expect(listed.channels).toBe(1);

    const resolved = await waitFor(
      'a resolved message at the receiver',
      async () => {
        expect((await call(false)).isError).toBeFalsy();
        return received.find((m) => m.json.status === 'resolved');
      },
      60_000,
    ).catch(explain);
    await mcp.close();
    expect(signatureVerifies(resolved)).toBe(true);
    expect(resolved.json.alerts).toMatchObject([{ rule: 'error_rate', state: 'resolved' }]);
    // a tampered body does not verify
    expect(signatureVerifies({ ...resolved, body: resolved.body.replace('resolved', 'firing') })).toBe(false);

    const cli = await runCli(['alerts', '--deployment', deployment.deployment_id, '--json'], {
      cwd: sandbox.dir,
      env: { ...sandbox.env, MCPCTL_API_URL: engine.url, MCPCTL_API_KEY: API_KEY },
    });
    expect(cli.code, cli.stderr).toBe(0);
    const shown = JSON.parse(cli.stdout) as { firing: unknown[]; recent: Array<{ rule: string; state: string }> };
    expect(shown.firing).toEqual([]);
    expect(shown.recent).toMatchObject([{ rule: 'error_rate', state: 'resolved' }]);
    const human = await runCli(['alerts'], {
      cwd: sandbox.dir,
      env: { ...sandbox.env, MCPCTL_API_URL: engine.url, MCPCTL_API_KEY: API_KEY, NO_COLOR: '1' },
    });
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain('no alert is firing');
    expect(human.stdout).toMatch(
      new RegExp(
        `resolved lately[\\s\\S]*${deployment.deployment_id}\\s+watched\\s+production\\s+error_rate\\s+critical`,
      ),
    );
    // neither the channel's URL nor its secret is in what the engine logged
    expect(lines.join('\n')).not.toContain(SECRET);
    expect(lines.join('\n')).not.toContain(url);
  }, 180_000);
});
