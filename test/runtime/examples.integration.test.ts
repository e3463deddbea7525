/**
 * Each definition of examples/ is served by `mcpctl dev` and answers an MCP client. The weather
 * example talks to a stand-in for its API on 127.0.0.1.
 */
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { startDev } from '../support/dev-session.js';
import { closeServer, connect, firstText, listen } from '../support/runtime.js';

const EXAMPLES = join(import.meta.dirname, '..', '..', 'examples');

async function devJson(example: string, env: Record<string, string> = {}, extra: string[] = []) {
  const session = startDev(['--json', join(EXAMPLES, example, 'server.yaml'), '--port', '0', ...extra], { env });
  const [, url] = await session.waitFor(/"mcp_url": "([^"]+)"/);
  return { session, mcpUrl: url! };
}

describe('examples', () => {
  it('weather: finds a place and its forecast through the (stand-in) Open-Meteo API', async () => {
    const seen: string[] = [];
    const api = await listen((req, res) => {
      seen.push(req.url ?? '');
      const url = new URL(req.url ?? '/', 'http://x');
      res.setHeader('content-type', 'application/json');
      if (url.pathname === '/v1/search') {
        res.end(
          JSON.stringify({
            results: [
              {
                name: url.searchParams.get('name'),
                latitude: 52.52,
                longitude: 13.41,
                country: 'Germany',
                timezone: 'Europe/Berlin',
              },
            ],
          }),
        );
      } else if (url.pathname === '/v1/forecast') {
        res.end(
          JSON.stringify({
            latitude: Number(url.searchParams.get('latitude')),
            daily: { time: ['2025-06-01'], temperature_2m_max: [24.1] },
            days: url.searchParams.get('forecast_days'),
          }),
        );
      } else res.writeHead(404).end('{}');
    });
    try {
      const { session, mcpUrl } = await devJson('weather', { WEATHER_API_URL: api.url, GEOCODING_API_URL: api.url });
      await using _dev = session;
      await using client = await connect(mcpUrl);
      const place = await client.callTool({ name: 'find_location', arguments: { name: 'Frankfurt am Main' } });
      expect(place.structuredContent).toMatchObject({ results: [{ name: 'Frankfurt am Main', latitude: 52.52 }] });
      const forecast = await client.callTool({
        name: 'get_forecast',
        arguments: { latitude: 52.52, longitude: 13.41 },
      });
      expect(forecast.structuredContent).toMatchObject({
        latitude: 52.52,
        days: '3',
        daily: { temperature_2m_max: [24.1] },
      });
      expect(seen[0]).toBe('/v1/search?name=Frankfurt%20am%20Main&count=3&language=en&format=json');
      const codes = await client.readResource({ uri: 'weather://codes' });
      expect(codes.contents[0]).toMatchObject({
        mimeType: 'text/markdown',
        text: expect.stringContaining('thunderstorm'),
      });
      const prompt = await client.getPrompt({
        name: 'plan_outing',
        arguments: { place: 'Lisbon', activity: 'a bike ride' },
      });
      expect(prompt.messages[0]!.content).toMatchObject({ text: expect.stringContaining('a bike ride in Lisbon') });
    } finally {
      await closeServer(api.server);
    }
  });

  it('notes: serves each user their own notes, searches them, and keeps the audit log for admins', async () => {
    const { session, mcpUrl } = await devJson('notes');
    await using _dev = session;
    await using alice = await connect(mcpUrl, { headers: { 'X-MCP-User-Id': 'alice' } });
    expect((await alice.readResource({ uri: 'notes://me/today' })).contents[0]).toMatchObject({
      text: expect.stringContaining('offsite'),
    });
    expect((await alice.readResource({ uri: 'notes://me/2025-06-02' })).contents[0]).toMatchObject({
      text: expect.stringContaining('2 June'),
    });
    const search = await alice.callTool({ name: 'search_notes', arguments: { query: 'billing export' } });
    expect(search.structuredContent).toMatchObject({
      user: 'alice',
      matches: [{ day: 'today' }, { day: '2025-06-02' }],
    });
    await expect(alice.readResource({ uri: 'notes://admin/audit' })).rejects.toThrow(/may not read/);
    const review = await alice.getPrompt({ name: 'daily_review', arguments: { focus: 'open questions' } });
    expect(review.messages[1]!.content).toMatchObject({
      type: 'resource',
      resource: { text: expect.stringContaining('second on-call') },
    });

    await using bob = await connect(mcpUrl, { headers: { 'X-MCP-User-Id': 'bob' } });
    expect((await bob.readResource({ uri: 'notes://me/today' })).contents[0]).toMatchObject({
      text: expect.stringContaining('designer'),
    });
    expect(firstText(await bob.callTool({ name: 'whoami', arguments: {} }))).toBe('You are bob on notes.');
    await using admin = await connect(mcpUrl, { headers: { 'X-MCP-User-Id': 'admin' } });
    expect((await admin.readResource({ uri: 'notes://admin/audit' })).contents[0]).toMatchObject({
      text: expect.stringContaining('read by admin'),
    });
  });

  it('notes: takes the user from --user-id when a request names none', async () => {
    const { session, mcpUrl } = await devJson('notes', {}, ['--user-id', 'bob']);
    await using _dev = session;
    await using client = await connect(mcpUrl);
    expect(firstText(await client.callTool({ name: 'whoami', arguments: {} }))).toBe('You are bob on notes.');
  });

  it('calculator: evaluates, describes and converts in its TypeScript module', async () => {
    const { session, mcpUrl } = await devJson('calculator');
    await using _dev = session;
    await using client = await connect(mcpUrl);
    expect(
      (await client.callTool({ name: 'evaluate', arguments: { expression: '(17 * 23) + sqrt(144)' } }))
        .structuredContent,
    ).toEqual({
      expression: '(17 * 23) + sqrt(144)',
      result: 403,
    });
    expect(
      (await client.callTool({ name: 'evaluate', arguments: { expression: '2 ^ 3 ^ 2 - -1' } })).structuredContent,
    ).toMatchObject({ result: 513 });
    const bad = await client.callTool({ name: 'evaluate', arguments: { expression: 'process.exit(1)' } });
    expect(bad.isError).toBe(true);
    expect(firstText(bad)).toMatch(/unknown name "process"|unexpected/);
    expect(
      (await client.callTool({ name: 'statistics', arguments: { numbers: [2, 4, 4, 4, 5, 5, 7, 9] } }))
        .structuredContent,
    ).toEqual({
      count: 8,
      sum: 40,
      mean: 5,
      median: 4.5,
      min: 2,
      max: 9,
      stdev: 2,
    });
    expect(firstText(await client.callTool({ name: 'convert', arguments: { value: 100, from: 'c', to: 'f' } }))).toBe(
      '100 c = 212 f',
    );
    expect(
      firstText(await client.callTool({ name: 'convert', arguments: { value: 1, from: 'kg', to: 'km' } })),
    ).toMatch(/different things/);
    expect((await client.readResource({ uri: 'calc://constants' })).contents[0]).toMatchObject({
      mimeType: 'application/json',
    });
  });
});
