/**
 * `GET /v1/servers/:mcp_id/definition` on a real engine: a build that says where its definition is
 * written answers with each item's line; the handlers' configuration never leaves the engine; the
 * place is no part of the bundle, so the same definition from another file is the same server.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { call, requireBuilt, TEST_KEY } from '../support/app.js';
import { realEnginePerTest } from '../support/engine.js';

beforeAll(() => requireBuilt());

const engines = realEnginePerTest(TEST_KEY);

// literal secrets and an internal address, as a careless definition may hold them
const SECRET = 'sk-live-4f9a8b7c6d5e4f3a2b1c';
const INTERNAL = 'http://10.20.30.40:8080/internal/forecast';

function definition() {
  return {
    name: 'weather',
    template: 'basic' as const,
    version: '1.2.0',
    description: 'Weather forecasts',
    tools: [
      {
        name: 'get_forecast',
        title: 'Forecast',
        description: 'Get the forecast for a city',
        inputSchema: { type: 'object' as const, properties: { city: { type: 'string' as const } }, required: ['city'] },
        annotations: { readOnlyHint: true },
        handler: {
          type: 'http' as const,
          url: INTERNAL,
          headers: { Authorization: `Bearer ${SECRET}` },
        },
      },
      {
        name: 'say_hi',
        description: 'Says hi',
        inputSchema: { type: 'object' as const },
        handler: { type: 'static' as const, content: [{ type: 'text' as const, text: `hi ${SECRET}` }] },
      },
    ],
    resources: [
      {
        uri: 'weather://cities',
        name: 'cities',
        description: 'Known cities',
        mimeType: 'text/plain',
        source: { type: 'url' as const, url: INTERNAL, headers: { 'X-Api-Key': SECRET } },
      },
    ],
    prompts: [
      {
        name: 'plan',
        description: 'Plans an outing',
        arguments: [{ name: 'place', description: 'where', required: true }],
        messages: [{ role: 'user' as const, content: `Plan it with ${SECRET}` }],
      },
    ],
  };
}

const SOURCE = {
  file: 'weather/server.yaml',
  tools: { get_forecast: { line: 14, column: 5 }, say_hi: { line: 30, column: 5 } },
  resources: { 'weather://cities': { line: 40, column: 5 } },
  prompts: { plan: { line: 50, column: 5 } },
};

describe('GET /v1/servers/:mcp_id/definition', () => {
  it('answers what the server offers with the line and column of each item', async () => {
    const { engine } = await engines.start();
    const built = await call(engine.url, 'POST', '/v1/build', { json: { ...definition(), source: SOURCE } });
    expect(built.status, built.text).toBe(200);
    const id = built.body.data.mcp_id as string;

    const answer = await call(engine.url, 'GET', `/v1/servers/${id}/definition`);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.data).toEqual({
      mcp_id: id,
      name: 'weather',
      version: '1.2.0',
      description: 'Weather forecasts',
      file: 'weather/server.yaml',
      tools: [
        {
          name: 'get_forecast',
          title: 'Forecast',
          description: 'Get the forecast for a city',
          inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          annotations: { readOnlyHint: true },
          handler: 'http',
          line: 14,
          column: 5,
        },
        {
          name: 'say_hi',
          description: 'Says hi',
          inputSchema: { type: 'object' },
          handler: 'static',
          line: 30,
          column: 5,
        },
      ],
      resources: [
        {
          uri: 'weather://cities',
          name: 'cities',
          description: 'Known cities',
          mimeType: 'text/plain',
          line: 40,
          column: 5,
        },
      ],
      prompts: [
        {
          name: 'plan',
          description: 'Plans an outing',
          arguments: [{ name: 'place', description: 'where', required: true }],
          line: 50,
          column: 5,
        },
      ],
    });
  });

  it('ATTACK: never gives a handler’s headers, url or content, a resource’s source or a prompt’s messages', async () => {
    const { engine } = await engines.start();
    const built = await call(engine.url, 'POST', '/v1/build', { json: { ...definition(), source: SOURCE } });
    const answer = await call(engine.url, 'GET', `/v1/servers/${built.body.data.mcp_id}/definition`);
    expect(answer.status).toBe(200);
    expect(answer.text).not.toContain(SECRET);
    expect(answer.text).not.toContain('10.20.30.40');
    expect(answer.text).not.toContain('Authorization');
    expect(answer.text).not.toContain('X-Api-Key');
    expect(answer.text).not.toContain('Plan it');
  });

  it('answers 404 not_found for a server it does not have, as GET /v1/servers/:id does', async () => {
    const { engine } = await engines.start();
    for (const id of ['mcp_doesnotexist', 'not-an-id', 'mcp_%3Cscript%3E']) {
      const answer = await call(engine.url, 'GET', `/v1/servers/${id}/definition`);
      expect(answer.status, id).toBe(404);
      expect(answer.body.error.code).toBe('not_found');
      expect(answer.body.error.message).toContain('mcpctl ls --servers');
    }
    expect((await call(engine.url, 'GET', '/v1/servers/mcp_doesnotexist/definition', { key: null })).status).toBe(401);
  });

  it('a build without source answers without file or lines', async () => {
    const { engine } = await engines.start();
    const built = await call(engine.url, 'POST', '/v1/build', { json: definition() });
    const answer = await call(engine.url, 'GET', `/v1/servers/${built.body.data.mcp_id}/definition`);
    expect(answer.body.data).not.toHaveProperty('file');
    for (const item of [...answer.body.data.tools, ...answer.body.data.resources, ...answer.body.data.prompts]) {
      expect(item).not.toHaveProperty('line');
      expect(item).not.toHaveProperty('column');
    }
  });

  it('keeps the place out of the bundle: the same digest and server with or without it, the newest place shown', async () => {
    const { engine } = await engines.start();
    const bare = await call(engine.url, 'POST', '/v1/build', { json: definition() });
    const placed = await call(engine.url, 'POST', '/v1/build', { json: { ...definition(), source: SOURCE } });
    const moved = { ...SOURCE, file: 'elsewhere/weather.yaml', tools: { get_forecast: { line: 3, column: 7 } } };
    const elsewhere = await call(engine.url, 'POST', '/v1/build', { json: { ...definition(), source: moved } });
    expect(placed.body.data.bundle_digest).toBe(bare.body.data.bundle_digest);
    expect(elsewhere.body.data.bundle_digest).toBe(bare.body.data.bundle_digest);
    expect(placed.body.data.mcp_id).toBe(bare.body.data.mcp_id);
    expect(placed.body.data.reused).toBe(true);
    expect(elsewhere.body.data.mcp_id).toBe(bare.body.data.mcp_id);

    const answer = await call(engine.url, 'GET', `/v1/servers/${bare.body.data.mcp_id}/definition`);
    expect(answer.body.data.file).toBe('elsewhere/weather.yaml');
    expect(answer.body.data.tools[0]).toMatchObject({ name: 'get_forecast', line: 3, column: 7 });
    expect(answer.body.data.tools[1]).not.toHaveProperty('line');
    // the server's own answer is what it was: no source in it
    const server = await call(engine.url, 'GET', `/v1/servers/${bare.body.data.mcp_id}`);
    expect(server.text).not.toContain('elsewhere');
  });

  it('refuses a source over the limits, as any other field of the contract', async () => {
    const { engine } = await engines.start();
    const answer = await call(engine.url, 'POST', '/v1/build', {
      json: { ...definition(), source: { file: 'x'.repeat(1025) } },
    });
    expect(answer.status).toBe(422);
    expect(answer.body.error.code).toBe('validation_failed');
  });
});
