/**
 * The pure parts of tracing: its settings (endpoint, headers that are never quoted), the trace
 * headers of the hop to an instance, a span's name and attributes in the MCP conventions, an
 * instance's `span` line read back and checked, what the gateway reads from a body only when
 * tracing, and the runtime's side: which `traceparent` starts a span, and the line it writes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { EngineConfigError } from '../../../src/engine/engine-errors.js';
import { shownUrl, tracingConfig, withTraceContext } from '../../../src/engine/observability/tracing.js';
import {
  bodyTraceFacts,
  instanceSpanOf,
  spanAttributes,
  spanName,
  type SpanFacts,
} from '../../../src/engine/observability/tracing-spans.js';
import { spanEntry, spanStartOf, spansWanted } from '../../../src/runtime/server/trace-spans.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

describe('tracing settings', () => {
  it('is off without an endpoint, and adds /v1/traces to the general one only', () => {
    expect(tracingConfig({}, undefined, '1.0.0')).toBeUndefined();
    expect(tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/' }, undefined, '1.0.0')).toEqual({
      url: 'http://127.0.0.1:4318/v1/traces',
      headers: {},
      serviceName: 'mcpctl',
      version: '1.0.0',
    });
    const both = tracingConfig(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector.example/otlp/traces',
        OTEL_SERVICE_NAME: 'edge',
      },
      undefined,
      '1.0.0',
    );
    expect(both).toMatchObject({ url: 'https://collector.example/otlp/traces', serviceName: 'edge' });
  });

  it('reads the settings file too', () => {
    const file = { path: '/home/engine-settings.json', values: { otel: { endpoint: 'http://collector:4318' } } };
    expect(tracingConfig({}, file, '1.0.0')?.url).toBe('http://collector:4318/v1/traces');
  });

  it('refuses an endpoint that is not an http(s) URL, naming the variable', () => {
    expect(() => tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, undefined, '1')).toThrow(
      EngineConfigError,
    );
    expect(() => tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, undefined, '1')).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT must be an http:\/\/ or https:\/\/ URL/,
    );
  });

  it('takes percent-encoded header pairs, and names a wrong pair by position without quoting a value', () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://api.honeycomb.io',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-honeycomb-team=abc%20def , Authorization=Bearer%20tok==,',
    };
    expect(tracingConfig(env, undefined, '1')?.headers).toEqual({
      'x-honeycomb-team': 'abc def',
      authorization: 'Bearer tok==',
    });
    const wrong = { ...env, OTEL_EXPORTER_OTLP_HEADERS: 'x-team=fine,secret-value-9f3a' };
    expect(() => tracingConfig(wrong, undefined, '1')).toThrow(/OTEL_EXPORTER_OTLP_HEADERS .*pair 2 is not/);
    expect(() => tracingConfig(wrong, undefined, '1')).not.toThrow(/secret-value/);
  });

  it('shows a URL without its credentials or query', () => {
    expect(shownUrl('https://user:pass@collector.example:4318/v1/traces?key=k')).toBe(
      'https://collector.example:4318/v1/traces',
    );
  });
});

describe('the trace headers of the hop to an instance', () => {
  it("replace the client's traceparent and tracestate with the span's; without a span nothing changes", () => {
    const headers = ['host', '127.0.0.1:1', 'traceparent', 'client', 'tracestate', 'a=b', 'accept', '*/*'];
    expect(withTraceContext(headers, undefined)).toBe(headers);
    const span = { headers: ['traceparent', `00-${TRACE}-${PARENT}-01`], end: () => {} };
    expect(withTraceContext(headers, span)).toEqual([
      'host',
      '127.0.0.1:1',
      'accept',
      '*/*',
      'traceparent',
      `00-${TRACE}-${PARENT}-01`,
    ]);
  });
});

const BASE: SpanFacts = {
  deploymentId: 'dep_1',
  server: 'weather',
  environment: 'production',
  httpMethod: 'POST',
  status: 200,
};

describe('span names and attributes', () => {
  it.each([
    [{ method: 'tools/call', target: 'forecast' }, 'tools/call forecast'],
    [{ method: 'resources/read', target: 'file:///a' }, 'resources/read file:///a'],
    [{ method: 'tools/list' }, 'tools/list'],
    [{ httpMethod: 'GET' }, 'GET'],
  ])('%j is named %s', (facts, name) => {
    expect(spanName({ ...BASE, ...facts })).toBe(name);
  });

  it('name the target by its kind, and the error type of the one vocabulary', () => {
    const call = spanAttributes({ ...BASE, method: 'tools/call', target: 'forecast', rpcId: 7, toolError: true });
    expect(call).toEqual({
      error: true,
      attributes: {
        'mcpctl.deployment.id': 'dep_1',
        'mcpctl.server.name': 'weather',
        'mcpctl.environment': 'production',
        'http.request.method': 'POST',
        'http.response.status_code': 200,
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': 'forecast',
        'gen_ai.operation.name': 'execute_tool',
        'jsonrpc.request.id': '7',
        'error.type': 'tool_error',
      },
    });
    const prompt = spanAttributes({ ...BASE, method: 'prompts/get', target: 'summary', session: 's1' });
    expect(prompt.attributes).toMatchObject({ 'gen_ai.prompt.name': 'summary', 'mcp.session.id': 's1' });
    expect(prompt.error).toBe(false);
    const read = spanAttributes({ ...BASE, method: 'resources/read', target: 'file:///a', status: 503 });
    expect(read.attributes).toMatchObject({ 'mcp.resource.uri': 'file:///a', 'error.type': 'http_5xx' });
  });
});

describe("an instance's span line", () => {
  const line = {
    event: 'span',
    trace_id: TRACE,
    span_id: 'b7ad6b7169203331',
    parent_span_id: PARENT,
    start: 1_700_000_000_000.25,
    end: 1_700_000_000_003.5,
    http_method: 'POST',
    status: 200,
    rpc: 'tools/call',
    target: 'forecast',
    rpc_id: 3,
    is_error: true,
  };
  const source = { deploymentId: 'dep_1', server: 'weather', environment: 'production', instance: 'i-1' };

  it('is read back with its facts', () => {
    expect(instanceSpanOf(line, source)).toEqual({
      traceId: TRACE,
      spanId: 'b7ad6b7169203331',
      parentId: PARENT,
      start: 1_700_000_000_000.25,
      end: 1_700_000_000_003.5,
      facts: {
        ...source,
        httpMethod: 'POST',
        method: 'tools/call',
        target: 'forecast',
        rpcId: 3,
        status: 200,
        toolError: true,
      },
    });
  });

  it.each([
    ['a short trace id', { trace_id: 'abc' }],
    ['an upper-case span id', { span_id: 'B7AD6B7169203331' }],
    ['no parent', { parent_span_id: undefined }],
    ['an end before its start', { end: 1 }],
    ['a span of days', { end: 1_700_000_000_000 + 3 * 86_400_000 }],
    ['a status that is no HTTP status', { status: 42 }],
    ['a start that is text', { start: 'now' }],
  ])('with %s is dropped', (_what, change) => {
    expect(instanceSpanOf({ ...line, ...change }, source)).toBeUndefined();
  });

  it('keeps texts short', () => {
    const span = instanceSpanOf({ ...line, target: 'x'.repeat(10_000) }, source);
    expect(span?.facts.target).toHaveLength(256);
  });
});

describe('what the gateway reads from a body when tracing', () => {
  it("reads a prompt's name, a resource's URI and a traceparent in _meta; nothing else parses", () => {
    const body = (method: string, params: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
    expect(bodyTraceFacts('prompts/get', body('prompts/get', { name: 'summary' }))).toEqual({ target: 'summary' });
    expect(bodyTraceFacts('resources/read', body('resources/read', { uri: 'file:///a' }))).toEqual({
      target: 'file:///a',
    });
    const withMeta = body('tools/call', { name: 't', _meta: { traceparent: `00-${TRACE}-${PARENT}-01` } });
    expect(bodyTraceFacts('tools/call', withMeta)).toEqual({ traceparent: `00-${TRACE}-${PARENT}-01` });
    expect(bodyTraceFacts('tools/call', body('tools/call', { name: 't' }))).toBeUndefined();
    expect(bodyTraceFacts('prompts/get', '{not json')).toBeUndefined();
  });
});

describe("the runtime's spans", () => {
  it('are wanted only when the engine says so', () => {
    expect(spansWanted({ MCPCTL_TRACE_SPANS: '1' })).toBe(true);
    expect(spansWanted({})).toBe(false);
    expect(spansWanted(undefined)).toBe(false);
  });

  it('start for a valid sampled traceparent only', () => {
    const span = spanStartOf(`00-${TRACE}-${PARENT}-01`);
    expect(span).toMatchObject({ traceId: TRACE, parentId: PARENT });
    expect(span?.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(span?.spanId).not.toBe(PARENT);
    expect(spanStartOf(`01-${TRACE}-${PARENT}-01-more`)).toBeDefined();
    for (const header of [
      undefined,
      ['a', 'b'],
      `00-${TRACE}-${PARENT}-00`,
      `00-${TRACE}-${PARENT}-01-more`,
      `ff-${TRACE}-${PARENT}-01`,
      `00-${'0'.repeat(32)}-${PARENT}-01`,
      `00-${TRACE}-${'0'.repeat(16)}-01`,
      `00-${TRACE.toUpperCase()}-${PARENT}-01`,
    ])
      expect(spanStartOf(header)).toBeUndefined();
  });

  it('are written as one line the engine reads back', () => {
    const span = spanStartOf(`00-${TRACE}-${PARENT}-01`)!;
    const req = { method: 'POST', headers: { 'mcp-session-id': 'sess-1' } } as unknown as IncomingMessage;
    const res = { statusCode: 200, getHeader: () => undefined } as unknown as ServerResponse;
    const entry = spanEntry(span, req, res, { rpc: 'tools/call', target: 'forecast', rpcId: 'r1', isError: true });
    expect(entry).toMatchObject({
      level: 'info',
      event: 'span',
      trace_id: TRACE,
      parent_span_id: PARENT,
      session: 'sess-1',
      rpc_id: 'r1',
      is_error: true,
    });
    const back = instanceSpanOf(JSON.parse(JSON.stringify(entry)) as Record<string, unknown>, {
      deploymentId: 'd',
      server: 's',
      environment: 'staging',
    });
    expect(back?.facts).toMatchObject({ method: 'tools/call', target: 'forecast', session: 'sess-1', toolError: true });
  });
});
