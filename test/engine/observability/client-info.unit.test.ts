/**
 * Which MCP client a request counts for in the usage figures: the `clientInfo` of an `initialize`
 * (or of a request's `_meta`, the 2026-07-28 revision), cleaned and cut short; a session remembers
 * the client that opened it; without a session, the client last named on the connection.
 */
import { describe, expect, it } from 'vitest';
import { connectionClient } from '../../../src/engine/gateway/connection-clients.js';
import { inspectRequest, MAX_CLIENT_TEXT } from '../../../src/engine/gateway/mcp-messages.js';
import { Sessions } from '../../../src/engine/gateway/session-table.js';
import type { Backend } from '../../../src/engine/gateway/upstream.js';

const initialize = (clientInfo: unknown) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', clientInfo },
  });

describe('the client of a request', () => {
  it('an initialize names it: name and version, control characters removed, cut short', () => {
    expect(inspectRequest(initialize({ name: 'claude-code', version: '2.0.1' })).client).toEqual({
      name: 'claude-code',
      version: '2.0.1',
    });
    expect(inspectRequest(initialize({ name: 'bad\u001b[31m\nname' })).client).toEqual({ name: 'bad[31mname' });
    expect(inspectRequest(initialize({ name: 'x'.repeat(500), version: 7 })).client).toEqual({
      name: 'x'.repeat(MAX_CLIENT_TEXT),
    });
    expect(inspectRequest(initialize({ version: '1' })).client).toBeUndefined();
    expect(inspectRequest(initialize('cursor')).client).toBeUndefined();
  });

  it('a request of the 2026-07-28 revision names it in `_meta`; other requests do not name one', () => {
    const call = {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'echo', _meta: { 'io.modelcontextprotocol/clientInfo': { name: 'agent', version: '3' } } },
    };
    expect(inspectRequest(JSON.stringify(call))).toMatchObject({
      tool: 'echo',
      client: { name: 'agent', version: '3' },
    });
    const plain = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', clientInfo: { name: 'no' } } };
    expect(inspectRequest(JSON.stringify(plain)).client).toBeUndefined();
  });

  it('a session remembers the client that opened it', () => {
    const sessions = new Sessions();
    const instance = { id: 'i1', reachable: true, generation: 1 } as Backend;
    sessions.open('s1', instance, 0, 60_000, '127.0.0.1', { name: 'alpha', version: '1' });
    sessions.open('s2', instance, 0, 60_000, '127.0.0.1');
    expect(sessions.clientInfo('s1')).toEqual({ name: 'alpha', version: '1' });
    expect(sessions.clientInfo('s2')).toBeUndefined();
    sessions.close('s1');
    expect(sessions.clientInfo('s1')).toBeUndefined();
  });

  it('without a session: the client last named on the connection, per deployment', () => {
    const socket = {};
    expect(connectionClient(socket, 'deploy_a', undefined)).toBeUndefined();
    connectionClient(socket, 'deploy_a', { name: 'alpha' });
    expect(connectionClient(socket, 'deploy_a', undefined)).toEqual({ name: 'alpha' });
    expect(connectionClient(socket, 'deploy_b', undefined)).toBeUndefined();
    expect(connectionClient({}, 'deploy_a', undefined)).toBeUndefined();
  });
});
