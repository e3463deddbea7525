/**
 * `mcpctl-local` through the test service, against real runtimes of the examples and of the
 * init scaffolds: which tools it calls with which arguments, what it reads, what it replies,
 * that the test's user reaches the server, and that every runtime it starts stops.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestResult } from '../../../src/api/contract.js';
import type { TestRequest } from '../../../src/api/contract.js';
import { closeServer, listen } from '../../support/runtime.js';
import { requireBuilt } from '../../support/app.js';
import { createHarness, type Harness } from '../../support/agent.js';
import { exampleFile, scaffoldTemplates } from '../../support/catalogs.js';

let harness: Harness;
let templates: Awaited<ReturnType<typeof scaffoldTemplates>>;
let api: Awaited<ReturnType<typeof listen>>;
const apiRequests: string[] = [];

beforeAll(async () => {
  requireBuilt();
  // A stand-in for Open-Meteo on 127.0.0.1: the weather example's tools reach it through WEATHER_API_URL.
  api = await listen((req, res) => {
    apiRequests.push(req.url ?? '');
    const url = new URL(req.url ?? '/', 'http://x');
    res.setHeader('content-type', 'application/json');
    if (url.pathname === '/v1/search') {
      res.end(
        JSON.stringify({
          results: [{ name: url.searchParams.get('name'), latitude: 52.52, longitude: 13.41, country: 'Germany' }],
        }),
      );
    } else if (url.pathname === '/v1/forecast') {
      res.end(
        JSON.stringify({
          daily: { time: ['2025-06-01', '2025-06-02', '2025-06-03'], temperature_2m_max: [24.1, 22.5, 19.8] },
        }),
      );
    } else res.writeHead(404).end('{}');
  });
  // a deployed server reaches loopback only when its definition allows it
  harness = await createHarness({
    runtimeEnv: { WEATHER_API_URL: api.url, GEOCODING_API_URL: api.url },
    egress: { allow_private: true },
  });
  templates = await scaffoldTemplates();
});

afterAll(async () => {
  await harness?.close();
  await templates?.cleanup();
  if (api !== undefined) await closeServer(api.server);
});

interface Case {
  name: string;
  file: () => string;
  message: string;
  user?: string;
  tools: string[];
  resources?: string[];
  reply: string[];
  rate?: number;
}

const CASES: Case[] = [
  {
    name: 'calculator: arithmetic goes to evaluate with the expression',
    file: () => exampleFile('calculator'),
    message: 'What is 12 * (3 + 4)?',
    tools: ['evaluate'],
    reply: ['"expression":"12 * (3 + 4)"', '"result": 84'],
  },
  {
    name: "calculator: the example's own case",
    file: () => exampleFile('calculator'),
    message: 'What is (17 * 23) + sqrt(144)?',
    tools: ['evaluate'],
    reply: ['403'],
  },
  {
    name: 'calculator: a message near the size limit is read from its start',
    file: () => exampleFile('calculator'),
    message: `What is 12 * (3 + 4)? ${'Thanks a lot. '.repeat(2200)}`,
    tools: ['evaluate'],
    reply: ['"result": 84'],
  },
  {
    name: 'calculator: units and a number from the message',
    file: () => exampleFile('calculator'),
    message: 'Convert 5 km to mi',
    tools: ['convert'],
    reply: ['{"value":5,"from":"km","to":"mi"}', '5 km = 3.10685596119 mi'],
  },
  {
    name: 'calculator: two requests joined by "and" call two tools',
    file: () => exampleFile('calculator'),
    message: 'What is 2 + 2 and convert 100 f to c?',
    tools: ['evaluate', 'convert'],
    reply: ['"result": 4', '100 f = 37.7777777778 c'],
  },
  {
    name: 'calculator: a list of numbers',
    file: () => exampleFile('calculator'),
    message: 'What is the mean of 3, 5 and 10?',
    tools: ['statistics'],
    reply: ['"numbers":[3,5,10]', '"mean": 6'],
  },
  {
    name: 'weather: finds the place first, then its forecast with the coordinates it got',
    file: () => exampleFile('weather'),
    message: 'What will the weather be like in Berlin for the next three days?',
    tools: ['find_location', 'get_forecast'],
    reply: ['{"name":"Berlin"}', '"latitude":52.52', '"days":3', '24.1'],
  },
  {
    name: 'weather: a resource by its words',
    file: () => exampleFile('weather'),
    message: 'What do the weather codes mean?',
    tools: [],
    resources: ['weather://codes'],
    reply: ['thunderstorm'],
  },
  {
    name: "notes: the user's own notes of today",
    file: () => exampleFile('notes'),
    message: 'What did I write down today?',
    user: 'alice',
    tools: [],
    resources: ['notes://me/today'],
    reply: ['offsite'],
  },
  {
    name: 'notes: a URI template filled with a date',
    file: () => exampleFile('notes'),
    message: 'What did I write on 2025-06-02?',
    user: 'alice',
    tools: [],
    resources: ['notes://me/2025-06-02'],
    reply: ['2 June'],
  },
  {
    name: 'notes: a search with the words after "for", as the user',
    file: () => exampleFile('notes'),
    message: 'Search my notes for billing export',
    user: 'bob',
    tools: ['search_notes'],
    reply: ['{"query":"billing export"}', '"user": "bob"'],
  },
  {
    name: 'notes: the user id reaches the server',
    file: () => exampleFile('notes'),
    message: 'Who am I?',
    user: 'bob',
    tools: ['whoami'],
    reply: ['You are bob on notes.'],
  },
  {
    name: 'notes: a failed call counts against the success rate (no user id for the search)',
    file: () => exampleFile('notes'),
    message: 'Search my notes for billing export',
    tools: ['search_notes'],
    reply: ['but it failed', 'no user id'],
    rate: 0,
  },
  {
    name: 'basic template: greets the capitalised name',
    file: () => templates.file('basic'),
    message: 'Please say hello to Ada Lovelace.',
    tools: ['greet'],
    reply: ['Hello, Ada Lovelace! Greetings from basic.'],
  },
  {
    name: 'basic template: reads the help page',
    file: () => templates.file('basic'),
    message: 'What can this server do? Check its help page.',
    tools: [],
    resources: ['docs://help'],
    reply: ['greets people'],
  },
  {
    name: 'advanced template (bearer auth): counts the words after the colon',
    file: () => templates.file('advanced'),
    message: 'How many words are in this sentence: the quick brown fox jumps over the lazy dog?',
    tools: ['text_stats'],
    reply: ['"words": 9'],
  },
  {
    name: 'advanced template: a URI template filled with a value its description lists',
    file: () => templates.file('advanced'),
    message: 'What was decided in the release meeting? Check the release notes.',
    tools: [],
    resources: ['notes://release'],
    reply: ['Version 2.3'],
  },
  {
    name: "advanced template: the user's profile, listed only to alice and bob",
    file: () => templates.file('advanced'),
    message: 'What are my preferences? Read my profile.',
    user: 'alice',
    tools: [],
    resources: ['profile://me'],
    reply: ['release manager'],
  },
  {
    name: 'custom template: a quoted title',
    file: () => templates.file('custom'),
    message: 'What is the URL slug for "Ten Things I Learned About YAML"?',
    tools: ['slugify'],
    reply: ['ten-things-i-learned-about-yaml'],
  },
  {
    name: "custom template: dice by the parameter's pattern",
    file: () => templates.file('custom'),
    message: 'Roll 3d6 for me.',
    tools: ['roll_dice'],
    reply: ['{"dice":"3d6"}', '"total": '],
  },
  {
    name: 'custom template: the tasks of the user',
    file: () => templates.file('custom'),
    message: 'What is on my task list?',
    user: 'alice',
    tools: ['my_tasks'],
    reply: ['Review the release checklist'],
  },
];

describe('mcpctl-local against real servers', () => {
  it.each(CASES)('$name', async (c) => {
    const record = await harness.record(c.file());
    const request: TestRequest = {
      mcp_id: record.server.mcp_id,
      message: c.message,
      ai_model: 'mcpctl-local',
      ...(c.user === undefined ? {} : { context: { user_id: c.user } }),
    };
    const result = TestResult.parse(await harness.service.test(record, request));
    expect(result.tools_used).toEqual(c.tools);
    expect(result.resources_accessed).toEqual(c.resources ?? []);
    for (const text of c.reply) expect(result.ai_response).toContain(text);
    expect(result.success_rate).toBe(c.rate ?? 1);
    expect(result.ai_model).toBe('mcpctl-local');
    expect(result.tool_calls?.map((call) => call.name)).toEqual(c.tools);
    for (const call of result.tool_calls ?? []) expect(call.duration_ms).toBeGreaterThanOrEqual(0);
    expect(result.execution_time).toBeGreaterThan(0);
  });

  it('told the stand-in API what the message said: the place, then its coordinates and three days', () => {
    const search = apiRequests.find((url) => url.startsWith('/v1/search'));
    const forecast = apiRequests.find((url) => url.startsWith('/v1/forecast'));
    expect(search).toContain('name=Berlin');
    expect(forecast).toContain('latitude=52.52');
    expect(forecast).toContain('longitude=13.41');
    expect(forecast).toContain('forecast_days=3');
  });

  it('calls nothing and says so when no tool fits; success rate 0, the request not understood', async () => {
    const record = await harness.record(exampleFile('calculator'));
    const result = await harness.service.test(record, {
      mcp_id: record.server.mcp_id,
      message: 'Tell me a joke about cats',
      ai_model: 'mcpctl-local',
    });
    expect(result.tools_used).toEqual([]);
    expect(result.resources_accessed).toEqual([]);
    expect(result.tool_calls).toEqual([]);
    expect(result.success_rate).toBe(0);
    expect(result.ai_response).toMatch(/did not find a tool or resource/);
    expect(result.guidance).toMatchObject({ band: 'major issues', causes: [{ kind: 'not_understood' }] });
  });

  it('says which value it lacked instead of calling a tool without it', async () => {
    const record = await harness.record(templates.file('advanced'));
    const result = await harness.service.test(record, {
      mcp_id: record.server.mcp_id,
      message: 'What is the current weather right now?',
      ai_model: 'mcpctl-local',
    });
    expect(result.tools_used).toEqual([]);
    expect(result.ai_response).toContain(
      'I would use current_weather, but the message does not give its latitude and longitude',
    );
    expect(result.guidance?.causes).toEqual([
      {
        kind: 'missing_tool',
        message: expect.stringContaining(
          "the agent would call current_weather, but neither the message nor any tool's output gives its latitude and longitude",
        ),
        tools: ['current_weather'],
      },
    ]);
  });

  it('keeps to the limit of calls of a run', async () => {
    const limited = await createHarness({ limits: { maxToolCalls: 1 } });
    try {
      const record = await limited.record(exampleFile('calculator'));
      const result = await limited.service.test(record, {
        mcp_id: record.server.mcp_id,
        message: 'What is 2 + 2 and convert 100 f to c?',
        ai_model: 'mcpctl-local',
      });
      expect(result.tools_used).toEqual(['evaluate']);
      expect(result.ai_response).toContain('I stopped after 1 calls, the limit of one test run.');
    } finally {
      await limited.close();
    }
  });

  it('stops every server it started (a run answers before its server is gone; close waits for it)', async () => {
    expect(harness.started.length).toBeGreaterThanOrEqual(CASES.length);
    await harness.service.close?.();
    expect(harness.started.filter((child) => !harness.exited.has(child.pid))).toEqual([]);
  });
});
