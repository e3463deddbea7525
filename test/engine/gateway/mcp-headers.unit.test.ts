import { describe, expect, it } from 'vitest';
import { decodeName, isStatelessRevision, readStandardHeaders } from '../../../src/engine/gateway/mcp-headers.js';
import { headerRequestInfo } from '../../../src/engine/gateway/mcp-messages.js';

const modern = { 'mcp-protocol-version': '2026-07-28' };

describe('readStandardHeaders', () => {
  it.each([
    ['a GET', 'GET', { ...modern, 'mcp-method': 'tools/list' }, { kind: 'body' }],
    ['a 2025 request', 'POST', { 'mcp-protocol-version': '2025-11-25', 'mcp-method': 'tools/list' }, { kind: 'body' }],
    ['no protocol version', 'POST', { 'mcp-method': 'tools/list' }, { kind: 'body' }],
    ['a version that is not a date', 'POST', { 'mcp-protocol-version': 'latest', 'mcp-method': 'x' }, { kind: 'body' }],
    ['no Mcp-Method (a notification needs none)', 'POST', modern, { kind: 'body' }],
    ['a method', 'POST', { ...modern, 'mcp-method': 'tools/list' }, { kind: 'headers', method: 'tools/list' }],
    [
      'a tool call',
      'POST',
      { ...modern, 'mcp-method': 'tools/call', 'mcp-name': 'get_weather' },
      { kind: 'headers', method: 'tools/call', name: 'get_weather' },
    ],
    [
      'a name in Base64',
      'POST',
      { ...modern, 'mcp-method': 'tools/call', 'mcp-name': `=?base64?${Buffer.from('météo').toString('base64')}?=` },
      { kind: 'headers', method: 'tools/call', name: 'météo' },
    ],
    [
      'optional whitespace around values',
      'POST',
      { 'mcp-protocol-version': ' 2026-07-28 ', 'mcp-method': ' ping ' },
      { kind: 'headers', method: 'ping' },
    ],
  ])('%s', (_what, method, headers, expected) => {
    expect(readStandardHeaders(method, headers)).toEqual(expected);
  });

  it.each([
    ['a method with a space (two headers joined)', { ...modern, 'mcp-method': 'tools/call, tools/list' }, /Mcp-Method/],
    ['a method too long', { ...modern, 'mcp-method': 'x'.repeat(600) }, /Mcp-Method/],
    ['a name that is not Base64', { ...modern, 'mcp-method': 'tools/call', 'mcp-name': '=?base64?a b?=' }, /Base64/],
    [
      'a name with a control character',
      { ...modern, 'mcp-method': 'tools/call', 'mcp-name': `=?base64?${Buffer.from('a\nb').toString('base64')}?=` },
      /control/,
    ],
  ])('refuses %s', (_what, headers, message) => {
    const read = readStandardHeaders('POST', headers);
    expect(read.kind).toBe('malformed');
    expect(read.kind === 'malformed' ? read.message : '').toMatch(message);
  });
});

describe('decodeName and isStatelessRevision', () => {
  it('decodes only the sentinel form', () => {
    expect(decodeName('plain')).toBe('plain');
    expect(decodeName('=?base64?aGk=?=')).toBe('hi');
    expect(decodeName('=?base64?aGk?=')).toBeUndefined();
    expect(decodeName('=?base64?/w==?=')).toBeUndefined(); // not UTF-8
  });
  it('knows the revisions without a session', () => {
    expect(isStatelessRevision('2026-07-28')).toBe(true);
    expect(isStatelessRevision('2027-01-01')).toBe(true);
    expect(isStatelessRevision('2025-11-25')).toBe(false);
    expect(isStatelessRevision(undefined)).toBe(false);
  });
});

describe('headerRequestInfo', () => {
  it('takes the method and tool from the headers and parses the body only when asked for the rest', () => {
    const body = Buffer.from(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: {
          name: 'get_weather',
          arguments: { city: 'Oslo' },
          _meta: { 'io.modelcontextprotocol/clientInfo': { name: 'probe', version: '1' } },
        },
      }),
    );
    const info = headerRequestInfo('tools/call', 'get_weather', body);
    expect(info.method).toBe('tools/call');
    expect(info.tool).toBe('get_weather');
    expect(info.id).toBe(9);
    expect(info.arguments).toEqual({ city: 'Oslo' });
    expect(info.client).toEqual({ name: 'probe', version: '1' });
    // a name is a tool's only for tools/call
    expect(headerRequestInfo('resources/read', 'test://a', Buffer.from('{}')).tool).toBeUndefined();
    // a body that is not JSON has no id: the gateway's own errors carry null
    expect(headerRequestInfo('ping', undefined, Buffer.from('nope')).id).toBeUndefined();
  });
});
