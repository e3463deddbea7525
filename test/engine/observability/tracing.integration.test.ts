/**
 * OpenTelemetry traces against real parts (the real runtime from dist/: `npm run build` first): an
 * OTLP/HTTP receiver on loopback decodes what the engine's exporter really sends (OTLP/JSON,
 * `application/json`, hex ids), an engine started with OTEL_EXPORTER_OTLP_ENDPOINT pointing at it
 * runs a built and deployed server, and a tool call yields the gateway's span and the instance's
 * span in one trace, the instance's a child of the gateway's, both with the MCP attributes; a
 * client's `traceparent` is continued. Without an endpoint the engine loads none of OpenTelemetry.
 */
import { createRequire } from 'node:module';
import type { IncomingMessage } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../../src/api/client.js';
import type { BuildRequestInput } from '../../../src/api/contract.js';
import { createLogger } from '../../../src/engine/engine-log.js';
import type { RunningEngine } from '../../../src/engine/engine.js';
import { createSandbox, type Sandbox } from '../../support/cli.js';
import { startRealEngine } from '../../support/engine.js';
import { closeServer, listen } from '../../support/http.js';
import { waitFor } from '../../support/wait.js';
import { greetAndFail } from '../../support/servers.js';

const API_KEY = 'tracing-test-engine-key-0123456789abcdef';
const OTLP_TOKEN = 'otlp-ingest-token-5e7a1c9b';

const SERVER: BuildRequestInput = greetAndFail('traced');

/** One span as the receiver decoded it. */
interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  start: bigint;
  end: bigint;
  status: number;
  attributes: Record<string, unknown>;
}

let sandbox: Sandbox;
let engine: RunningEngine | undefined;
const cleanups: Array<() => Promise<void>> = [];

beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(async () => {
  await engine?.close(1000);
  engine = undefined;
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await sandbox.cleanup();
});

/** An OTLP/HTTP traces receiver on loopback: what it was sent, decoded, and the headers of each export. */
async function otlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const exports: Array<{ path: string; contentType: string | undefined; authorization: string | undefined }> = [];
  const { server, url } = await listen((req, res) => {
    void readAll(req).then((raw) => {
      const contentType = req.headers['content-type'];
      exports.push({ path: req.url ?? '', contentType, authorization: req.headers.authorization });
      const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
      if (contentType !== 'application/json') {
        res.writeHead(415).end();
        return;
      }
      spans.push(...decodeOtlpJson(JSON.parse(body.toString('utf8'))));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  cleanups.push(() => closeServer(server));
  return { url, spans, exports };
}

async function readAll(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type OtlpAttributes = Array<{ key: string; value: OtlpValue }> | undefined;

/** An ExportTraceServiceRequest in OTLP/JSON (ids in hex, times as decimal strings of nanoseconds). */
function decodeOtlpJson(request: {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpAttributes };
    scopeSpans?: Array<{
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        startTimeUnixNano: string;
        endTimeUnixNano: string;
        status?: { code?: number };
        attributes?: OtlpAttributes;
      }>;
    }>;
  }>;
}): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const resourceSpans of request.resourceSpans ?? []) {
    const service = attributesOf(resourceSpans.resource?.attributes)['service.name'] as string;
    for (const scope of resourceSpans.scopeSpans ?? [])
      for (const span of scope.spans ?? [])
        out.push({
          service,
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? '',
          name: span.name,
          kind: span.kind,
          start: BigInt(span.startTimeUnixNano),
          end: BigInt(span.endTimeUnixNano),
          status: span.status?.code ?? 0,
          attributes: attributesOf(span.attributes),
        });
  }
  return out;
}

function attributesOf(list: OtlpAttributes): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? [])
    out[key] =
      value.stringValue ??
      (value.intValue === undefined ? undefined : Number(value.intValue)) ??
      value.boolValue ??
      value.doubleValue;
  return out;
}

async function deployed(headers?: Record<string, string>) {
  const client = new ApiClient({ baseUrl: engine!.url, apiKey: API_KEY });
  cleanups.push(() => client.close());
  const server = await client.build(SERVER);
  const { deployment } = await client.deploy({ mcp_id: server.mcp_id, environment: 'staging' });
  expect(deployment.status).toBe('deployed');
  return { deployment, connect: (extra?: Record<string, string>) => connect(deployment.url, extra ?? headers) };
}

async function connect(url: string, headers?: Record<string, string>): Promise<Client> {
  const mcp = new Client({ name: 'tracing-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    ...(headers === undefined ? {} : { requestInit: { headers } }),
  });
  await mcp.connect(transport);
  cleanups.push(() => mcp.close());
  return mcp;
}

/** The OpenTelemetry SDK's modules this process has loaded (the engine runs in it). */
function openTelemetryLoaded(): string[] {
  return Object.keys(createRequire(import.meta.url).cache).filter((path) =>
    /[\\/]@opentelemetry[\\/](sdk-trace|exporter-trace-otlp-http|otlp-exporter-base|resources)[\\/]/.test(path),
  );
}

/** The gateway's span of a call of `tool` and the instance's span under it, once both have arrived. */
function pairOf(spans: ReceivedSpan[], tool: string, traceId?: string) {
  const gateway = spans.find(
    (s) =>
      s.service === 'mcpctl-test' &&
      s.name === `tools/call ${tool}` &&
      (traceId === undefined || s.traceId === traceId),
  );
  if (gateway === undefined) return undefined;
  const instance = spans.find((s) => s.service === 'traced' && s.parentSpanId === gateway.spanId);
  return instance === undefined ? undefined : { gateway, instance };
}

describe('OpenTelemetry traces', () => {
  // first in this file: nothing of OpenTelemetry may have been loaded into this process before
  it('without an OTLP endpoint, loads no OpenTelemetry module and exports nothing', async () => {
    engine = await startRealEngine(sandbox.env.MCPCTL_HOME!, { apiKey: API_KEY });
    const { connect: open } = await deployed();
    const mcp = await open();
    const result = await mcp.callTool({ name: 'greet', arguments: { name: 'Ada' } });
    expect(result.isError).toBeFalsy();
    expect(openTelemetryLoaded()).toEqual([]);
  });

  it('a tool call yields the gateway span and the instance span in one trace, with the MCP attributes', async () => {
    const receiver = await otlpReceiver();
    const lines: string[] = [];
    engine = await startRealEngine(sandbox.env.MCPCTL_HOME!, {
      apiKey: API_KEY,
      logger: createLogger({ write: (line) => lines.push(line), level: 'debug' }),
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${OTLP_TOKEN}`,
        OTEL_SERVICE_NAME: 'mcpctl-test',
      },
    });
    const { deployment, connect: open } = await deployed();
    const mcp = await open();
    expect((await mcp.callTool({ name: 'greet', arguments: { name: 'Ada' } })).isError).toBeFalsy();
    expect((await mcp.callTool({ name: 'fail', arguments: {} })).isError).toBe(true);

    const { gateway, instance } = await waitFor('both spans of the greet call', () => pairOf(receiver.spans, 'greet'));
    expect(instance.traceId).toBe(gateway.traceId);
    expect(gateway.parentSpanId).toBe('');
    expect(instance.name).toBe('tools/call greet');
    for (const span of [gateway, instance]) {
      expect(span.kind).toBe(2); // SERVER
      expect(span.status).toBe(0);
      expect(span.attributes).toMatchObject({
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': 'greet',
        'gen_ai.operation.name': 'execute_tool',
        'jsonrpc.request.id': expect.any(String),
        'mcpctl.deployment.id': deployment.deployment_id,
        'mcpctl.server.name': 'traced',
        'mcpctl.environment': 'staging',
        'http.response.status_code': 200,
      });
      expect(span.attributes['error.type']).toBeUndefined();
    }
    expect(instance.attributes['jsonrpc.request.id']).toBe(gateway.attributes['jsonrpc.request.id']);
    expect(instance.attributes['mcpctl.instance.id']).toEqual(expect.any(String));
    // the instance's span starts within the gateway's (two processes read the clock: a millisecond of
    // leeway); where it ends is the instance's to say: a busy machine may run its end a moment late
    const leeway = 1_000_000n;
    expect(instance.start + leeway).toBeGreaterThanOrEqual(gateway.start);
    expect(instance.start).toBeLessThanOrEqual(gateway.end + leeway);
    expect(instance.end).toBeGreaterThanOrEqual(instance.start);

    // a failed call: error.type on both spans, whose status is ERROR
    const failed = await waitFor('both spans of the failed call', () => pairOf(receiver.spans, 'fail'));
    for (const span of [failed.gateway, failed.instance]) {
      expect(span.attributes['error.type']).toBe('tool_error');
      expect(span.status).toBe(2);
    }
    // the other requests of the session were traced too (initialize, its notification)
    expect(receiver.spans.some((s) => s.service === 'mcpctl-test' && s.name === 'initialize')).toBe(true);

    // the exports: OTLP/JSON to /v1/traces with the configured header, which no log line shows
    expect(receiver.exports[0]).toEqual({
      path: '/v1/traces',
      contentType: 'application/json',
      authorization: `Bearer ${OTLP_TOKEN}`,
    });
    expect(lines.join('')).not.toContain(OTLP_TOKEN);
    // span lines are exported, not logged
    const client = new ApiClient({ baseUrl: engine.url, apiKey: API_KEY });
    cleanups.push(() => client.close());
    const logged = await client.logs(deployment.deployment_id, { limit: 1000 });
    expect(JSON.stringify(logged)).not.toContain('span_id');
    // what the first test looks for is seen when it is there
    expect(openTelemetryLoaded()).not.toEqual([]);
  });

  it("continues a client's traceparent: the gateway span is its child, the instance span the gateway's", async () => {
    const receiver = await otlpReceiver();
    engine = await startRealEngine(sandbox.env.MCPCTL_HOME!, {
      apiKey: API_KEY,
      env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`, OTEL_SERVICE_NAME: 'mcpctl-test' },
    });
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const clientSpan = '00f067aa0ba902b7';
    const { connect: open } = await deployed();
    const mcp = await open({ traceparent: `00-${traceId}-${clientSpan}-01`, tracestate: 'vendor=opaque' });
    expect((await mcp.callTool({ name: 'greet', arguments: { name: 'Grace' } })).isError).toBeFalsy();

    const { gateway, instance } = await waitFor('both spans of the call', () =>
      pairOf(receiver.spans, 'greet', traceId),
    );
    expect(gateway.parentSpanId).toBe(clientSpan);
    expect(instance.traceId).toBe(traceId);
    expect(instance.parentSpanId).toBe(gateway.spanId);
  });
});
