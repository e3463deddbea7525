/**
 * The Prometheus exposition's logic in-process: the MCP operation histogram by method, tool and
 * error type, tool and method names bounded per deployment, gauges read from the deployments and
 * queues at scrape time, restarts a counter that never goes down, series of deployments long gone
 * dropped; and the credential check and settings of the /metrics endpoint.
 */
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createAdmission } from '../../../src/engine/admission.js';
import { EngineConfigError } from '../../../src/engine/engine-errors.js';
import { FailureLimiter } from '../../../src/engine/http/failure-limit.js';
import type { DeploymentSnapshot, RequestEvent } from '../../../src/engine/observability/events.js';
import { MAX_TOOLS, OTHER_NAMES, PrometheusMetrics, RETAIN_MS } from '../../../src/engine/observability/prometheus.js';
import {
  checkCredential,
  metricsSettings,
  parseAddress,
} from '../../../src/engine/observability/prometheus-endpoint.js';
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir } from '../../support/temp.js';

const EVENT: RequestEvent = {
  deploymentId: 'dep_1',
  server: 'calc',
  environment: 'production',
  at: 0,
  latencyMs: 12,
  status: 200,
  method: 'tools/call',
  tool: 'add',
  toolError: false,
  bytesIn: 100,
};

function snapshotOf(instances: DeploymentSnapshot['instances'], status = 'deployed'): DeploymentSnapshot {
  return { deploymentId: 'dep_1', server: 'calc', environment: 'production', status, desired: 2, instances };
}

/** The value of the series with exactly these labels (in the exposition's order), or undefined. */
function valueOf(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

const BASE = 'deployment="dep_1",server="calc",environment="production"';

describe('the Prometheus exposition', () => {
  it('counts requests by method, tool and error type, with their durations and bytes', async () => {
    const metrics = new PrometheusMetrics({});
    metrics.request(EVENT);
    metrics.request({ ...EVENT, toolError: true, latencyMs: 40 });
    metrics.request({ ...EVENT, status: 499 });
    metrics.request({ ...EVENT, status: 502 });
    metrics.request({ ...EVENT, status: 401, method: undefined, tool: undefined });
    metrics.request({ ...EVENT, method: 'initialize', tool: undefined, bytesIn: 50 });
    const text = await metrics.text();
    const count = (method: string, tool: string, error: string) =>
      valueOf(
        text,
        'mcp_server_operation_duration_seconds_count',
        `${BASE},mcp_method_name="${method}",gen_ai_tool_name="${tool}",error_type="${error}"`,
      );
    expect(count('tools/call', 'add', '')).toBe(1);
    expect(count('tools/call', 'add', 'tool_error')).toBe(1);
    expect(count('tools/call', 'add', 'client_gone')).toBe(1);
    expect(count('tools/call', 'add', 'http_5xx')).toBe(1);
    expect(count('(none)', '', 'http_4xx')).toBe(1);
    expect(count('initialize', '', '')).toBe(1);
    expect(
      valueOf(
        text,
        'mcp_server_operation_duration_seconds_bucket',
        `le="0.025",${BASE},mcp_method_name="tools/call",gen_ai_tool_name="add",error_type=""`,
      ),
    ).toBe(1);
    const bucket = (le: string) =>
      valueOf(
        text,
        'mcp_server_operation_duration_seconds_bucket',
        `le="${le}",${BASE},mcp_method_name="tools/call",gen_ai_tool_name="add",error_type="tool_error"`,
      );
    // cumulative: 40 ms is counted from the 0.05 bucket on
    expect([bucket('0.025'), bucket('0.05'), bucket('30'), bucket('+Inf')]).toEqual([0, 1, 1, 1]);
    expect(text).toMatch(/mcp_server_operation_duration_seconds_sum\{[^}]*error_type="tool_error"\} 0\.04\n/);
    expect(valueOf(text, 'mcpctl_gateway_request_bytes_total', BASE)).toBe(550);
    // the engine's own process metrics, under its prefix
    expect(text).toMatch(/^mcpctl_engine_process_cpu_user_seconds_total /m);
    metrics.close();
  });

  it(`keeps at most ${MAX_TOOLS} tool names per deployment; later ones are counted together`, async () => {
    const metrics = new PrometheusMetrics({});
    for (let i = 0; i < MAX_TOOLS + 20; i++) metrics.request({ ...EVENT, tool: `tool${i}` });
    metrics.request({ ...EVENT, tool: 'tool0' });
    metrics.request({ ...EVENT, deploymentId: 'dep_2', tool: 'tool119' });
    const text = await metrics.text();
    const countOf = (deployment: string, tool: string) =>
      valueOf(
        text,
        'mcp_server_operation_duration_seconds_count',
        `deployment="${deployment}",server="calc",environment="production",mcp_method_name="tools/call",gen_ai_tool_name="${tool}",error_type=""`,
      );
    expect(countOf('dep_1', 'tool0')).toBe(2);
    expect(countOf('dep_1', `tool${MAX_TOOLS - 1}`)).toBe(1);
    expect(countOf('dep_1', `tool${MAX_TOOLS}`)).toBeUndefined();
    expect(countOf('dep_1', OTHER_NAMES)).toBe(20);
    // each deployment has its own room
    expect(countOf('dep_2', 'tool119')).toBe(1);
    const series = text.split('\n').filter((l) => l.startsWith('mcp_server_operation_duration_seconds_count{'));
    expect(series).toHaveLength(MAX_TOOLS + 2);
    metrics.close();
  });

  it('bounds method names a client makes up', async () => {
    const metrics = new PrometheusMetrics({});
    for (let i = 0; i < 500; i++) metrics.request({ ...EVENT, method: `made/up${i}`, tool: undefined });
    const text = await metrics.text();
    const series = text.split('\n').filter((l) => l.startsWith('mcp_server_operation_duration_seconds_count{'));
    expect(series.length).toBeLessThanOrEqual(41);
    expect(text).toContain(`mcp_method_name="${OTHER_NAMES}"`);
    metrics.close();
  });

  it('reads instances, deployments and queues at scrape time; restarts only go up', async () => {
    let now = 1_000;
    let snapshots: DeploymentSnapshot[] = [
      snapshotOf([
        { id: 'i1', state: 'healthy', restarts: 0 },
        { id: 'i2', state: 'restarting', restarts: 2 },
      ]),
    ];
    const admission = createAdmission({ starts: 1, builds: 1, tests: 1, maxWaiting: 5 });
    const metrics = new PrometheusMetrics({ snapshot: () => snapshots, admission }, () => now);
    let text = await metrics.text();
    expect(valueOf(text, 'mcpctl_instances', `${BASE},state="healthy"`)).toBe(1);
    expect(valueOf(text, 'mcpctl_instances', `${BASE},state="restarting"`)).toBe(1);
    expect(valueOf(text, 'mcpctl_instance_restarts_total', BASE)).toBe(2);
    expect(valueOf(text, 'mcpctl_deployments', 'environment="production",status="deployed"')).toBe(1);
    expect(valueOf(text, 'mcpctl_admission_queue_depth', 'queue="starts"')).toBe(0);
    expect(valueOf(text, 'mcpctl_admission_running', 'queue="builds"')).toBe(0);

    // i2 is replaced by i3 (its restarts start again); i1 restarts once
    snapshots = [
      snapshotOf(
        [
          { id: 'i1', state: 'unhealthy', restarts: 1 },
          { id: 'i3', state: 'starting', restarts: 0 },
        ],
        'degraded',
      ),
    ];
    text = await metrics.text();
    expect(valueOf(text, 'mcpctl_instance_restarts_total', BASE)).toBe(3);
    expect(valueOf(text, 'mcpctl_instances', `${BASE},state="healthy"`)).toBe(0);
    expect(valueOf(text, 'mcpctl_instances', `${BASE},state="restarting"`)).toBeUndefined();
    expect(valueOf(text, 'mcpctl_deployments', 'environment="production",status="deployed"')).toBeUndefined();
    expect(valueOf(text, 'mcpctl_deployments', 'environment="production",status="degraded"')).toBe(1);

    // gone: its gauges at once, its counters once it has been gone a while
    metrics.request(EVENT);
    snapshots = [];
    text = await metrics.text();
    expect(valueOf(text, 'mcpctl_instances', `${BASE},state="healthy"`)).toBeUndefined();
    expect(valueOf(text, 'mcpctl_instance_restarts_total', BASE)).toBe(3);
    // requests keep it: 15 minutes from the last one
    now += RETAIN_MS - 1;
    metrics.request({ ...EVENT, at: now });
    now += RETAIN_MS - 1;
    text = await metrics.text();
    expect(valueOf(text, 'mcpctl_instance_restarts_total', BASE)).toBe(3);
    now += 1;
    text = await metrics.text();
    expect(valueOf(text, 'mcpctl_instance_restarts_total', BASE)).toBeUndefined();
    expect(text).not.toContain('deployment="dep_1"');
    metrics.close();
  });
});

function requestWith(authorization: string | undefined): IncomingMessage {
  return {
    headers: authorization === undefined ? {} : { authorization },
    socket: { remoteAddress: '127.0.0.1' },
  } as unknown as IncomingMessage;
}

const digest = (value: string) => createHash('sha256').update(value).digest();
const KEY = 'k'.repeat(40);
const TOKEN = 't'.repeat(40);

describe('the credential of /metrics', () => {
  it('takes the API key or the metrics token, and nothing else', () => {
    const failures = new FailureLimiter({ maxFailures: 3 });
    expect(() => checkCredential(requestWith(`Bearer ${KEY}`), digest(KEY), digest(TOKEN), failures)).not.toThrow();
    expect(() => checkCredential(requestWith(`bearer ${TOKEN}`), digest(KEY), digest(TOKEN), failures)).not.toThrow();
    expect(() => checkCredential(requestWith(`Bearer ${TOKEN}`), digest(KEY), undefined, failures)).toThrow(
      expect.objectContaining({ code: 'unauthorized' }),
    );
    expect(() => checkCredential(requestWith(undefined), digest(KEY), digest(TOKEN), failures)).toThrow(
      expect.objectContaining({ code: 'unauthorized' }),
    );
  });

  it('refuses an address that sent too many wrong ones, even with the right one', () => {
    const failures = new FailureLimiter({ maxFailures: 2 });
    const wrong = () => checkCredential(requestWith('Bearer nope'), digest(KEY), digest(TOKEN), failures);
    expect(wrong).toThrow(expect.objectContaining({ code: 'unauthorized' }));
    expect(wrong).toThrow(expect.objectContaining({ code: 'rate_limited' }));
    expect(() => checkCredential(requestWith(`Bearer ${TOKEN}`), digest(KEY), digest(TOKEN), failures)).toThrow(
      expect.objectContaining({ code: 'rate_limited' }),
    );
  });
});

describe('the metrics settings', () => {
  const NO_FILE = '/nonexistent/engine-settings.json';

  it('reads an address and a token', async () => {
    await expect(metricsSettings({}, NO_FILE)).resolves.toEqual({ token: undefined, address: undefined });
    await expect(
      metricsSettings({ MCPCTL_METRICS_ADDRESS: '[::1]:9464', MCPCTL_METRICS_TOKEN: TOKEN }, NO_FILE),
    ).resolves.toEqual({ token: TOKEN, address: { host: '::1', port: 9464 } });
    expect(parseAddress('0.0.0.0:0')).toEqual({ host: '0.0.0.0', port: 0 });
  });

  it('reads them from the settings file too', async () => {
    await using temp = await tempDir();
    const file = join(temp.dir, 'engine-settings.json');
    await writeFile(file, JSON.stringify({ metrics: { token: TOKEN, address: '0.0.0.0:9464' } }));
    await expect(metricsSettings({}, file)).resolves.toEqual({
      token: TOKEN,
      address: { host: '0.0.0.0', port: 9464 },
    });
  });

  it('refuses an address beyond loopback without a token, a weak token and a malformed address, naming the setting', async () => {
    await expect(metricsSettings({ MCPCTL_METRICS_ADDRESS: '0.0.0.0:9464' }, NO_FILE)).rejects.toThrow(
      /MCPCTL_METRICS_ADDRESS.*set MCPCTL_METRICS_TOKEN/,
    );
    await expect(metricsSettings({ MCPCTL_METRICS_TOKEN: 'short' }, NO_FILE)).rejects.toThrow(
      /MCPCTL_METRICS_TOKEN .*cannot be used: .*at least 32/,
    );
    await expect(metricsSettings({ MCPCTL_METRICS_ADDRESS: '9464' }, NO_FILE)).rejects.toThrow(EngineConfigError);
    await expect(metricsSettings({ MCPCTL_METRICS_ADDRESS: '127.0.0.1:70000' }, NO_FILE)).rejects.toThrow(
      /must be host:port/,
    );
  });
});
