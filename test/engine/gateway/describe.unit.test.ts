import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { answerDescription } from '../../../src/engine/gateway/describe.js';

function request(accept?: string, method = 'GET'): IncomingMessage {
  return {
    method,
    headers: { host: '127.0.0.1:7070', ...(accept === undefined ? {} : { accept }) },
    socket: {},
  } as unknown as IncomingMessage;
}

function response() {
  const headers: Record<string, unknown> = {};
  const sent = { status: 0, body: '', headers };
  const res = {
    set statusCode(value: number) {
      sent.status = value;
    },
    setHeader: (name: string, value: unknown) => void (headers[name.toLowerCase()] = value),
    end: (body?: string) => void (sent.body = body ?? ''),
  } as unknown as ServerResponse;
  return { res, sent };
}

const RUNNING = { deployment_id: 'deploy_abc', status: 'deployed', server: 'notes', environment: 'production' };

describe("a deployment's base URL", () => {
  it('describes the deployment as JSON by default, with the MCP URL of the name it was asked by', () => {
    const { res, sent } = response();
    answerDescription(request(), res, 'notes.production', { ...RUNNING, auth: 'bearer' });
    expect(sent.status).toBe(200);
    expect(JSON.parse(sent.body)).toMatchObject({
      name: 'notes.production',
      deployment_id: 'deploy_abc',
      status: 'deployed',
      mcp_url: 'http://127.0.0.1:7070/d/notes.production/mcp',
      health_url: 'http://127.0.0.1:7070/d/notes.production/health',
      auth: 'bearer',
    });
  });

  it('is a page for a browser, with what it shows escaped and nothing allowed to run', () => {
    const { res, sent } = response();
    answerDescription(request('text/html,application/xhtml+xml'), res, 'a<b>', RUNNING);
    expect(sent.headers['content-type']).toContain('text/html');
    expect(sent.headers['content-security-policy']).toContain("default-src 'none'");
    expect(sent.body).toContain('<h1>a&lt;b&gt;</h1>');
    expect(sent.body).not.toContain('<b>');
  });

  it('says a deployment that no longer runs is stopped; an unknown name is 404', () => {
    const stopped = response();
    answerDescription(request(), stopped.res, 'deploy_old', { deployment_id: 'deploy_old', status: 'stopped' });
    expect(JSON.parse(stopped.sent.body)).toMatchObject({ status: 'stopped', note: expect.stringContaining('503') });
    const unknown = response();
    answerDescription(request(), unknown.res, 'nothing', undefined);
    expect(unknown.sent.status).toBe(404);
    expect(JSON.parse(unknown.sent.body)).toEqual({ error: 'no deployment named nothing' });
  });
});
