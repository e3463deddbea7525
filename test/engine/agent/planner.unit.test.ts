/**
 * The local planner's pure parts, table-driven: reading a message (words, stems, numbers,
 * names, expressions, clauses), filling arguments by schema, and choosing steps on the
 * catalogs of the examples and of the init scaffolds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fillArguments, fillUriTemplate, listedValues } from '../../../src/engine/agent/local/arguments.js';
import { findInResults } from '../../../src/engine/agent/local/agent.js';
import {
  MIN_SCORE,
  indexCatalog,
  matchesTemplate,
  planRequest,
  scoreCandidates,
  splitClauses,
  toolStems,
  type PlannedStep,
} from '../../../src/engine/agent/local/planner.js';
import { composeReply, NOTHING_FOUND } from '../../../src/engine/agent/local/reply.js';
import {
  contentStems,
  findExpression,
  findNames,
  findNumbers,
  operatorsIn,
  splitWords,
  stem,
} from '../../../src/engine/agent/local/text.js';
import type { Catalog, InputSchema } from '../../../src/engine/agent/agent-types.js';
import { catalogOf, exampleFile, scaffoldTemplates } from '../../support/catalogs.js';

describe('reading a message', () => {
  it.each([
    ['get_current_weather', ['get', 'current', 'weather']],
    ['myTasks', ['my', 'tasks']],
    ['HTTPServer2 ready', ['http', 'server2', 'ready']],
    ["today's notes", ['today', 'notes']],
  ])('splits %s into words', (text, words) => {
    expect(splitWords(text)).toEqual(words);
  });

  it.each([
    ['notes', stem('note')],
    ['days', 'day'],
    ['matches', 'match'],
    ['queries', 'query'],
    ['meeting', 'meet'],
    ['decided', 'decid'],
    ['decide', 'decid'],
    ['status', 'status'],
    ['evaluates', stem('evaluate')],
  ])('stems %s like its base word', (word, expected) => {
    expect(stem(word)).toBe(expected);
  });

  it('keeps the words that tell tools apart, and operators written as operators', () => {
    expect(contentStems('What is the forecast for Paris?')).toEqual(['forecast', 'paris']);
    expect(operatorsIn('12 * (3 + 4) - 2 / sqrt(9)')).toEqual(['*', '+', '-', '/']);
    expect(operatorsIn('X-MCP-User-Id, km/h, 2025-06-02, notes://a/b')).toEqual([]);
  });

  it.each([
    ['What is 12 * (3 + 4)?', '12 * (3 + 4)'],
    ['What is (17 * 23) + sqrt(144)?', '(17 * 23) + sqrt(144)'],
    ['compute 2^10 - 1 please', '2^10 - 1'],
    ['pi * 2', 'pi * 2'],
    ['the mean of 3, 5 and 10', undefined],
    ['on 2025-06-02', undefined],
    ['roll 3d6', undefined],
  ])('finds the expression in %j', (text, expression) => {
    expect(findExpression(text)).toBe(expression);
  });

  it('finds numbers as digits and words, not inside dates or dice', () => {
    expect(findNumbers('at 52.52, -13.4 for three days on 2025-06-02, roll 3d6').map((n) => n.value)).toEqual([
      52.52, -13.4, 3,
    ]);
  });

  it.each([
    ['Please say hello to Ada Lovelace.', ['Ada Lovelace']],
    ['Weather in Frankfurt am Main and Paris?', ['Frankfurt am Main', 'Paris']],
    ['What is the forecast for Paris? Use get_forecast.', ['Paris']],
    ['Berlin is nice. I like it.', []],
  ])('finds the names in %j', (text, names) => {
    expect(findNames(text)).toEqual(names);
  });

  it.each([
    ['What is 2 + 2 and convert 100 f to c?', ['What is 2 + 2', 'convert 100 f to c?']],
    ['What are my preferences? Read my profile.', ['What are my preferences?', 'Read my profile.']],
    ['Count the words: salt and pepper', ['Count the words: salt and pepper']],
    ['Slug for "Salt and Pepper"; then roll 2d6', ['Slug for "Salt and Pepper"', 'roll 2d6']],
  ])('splits %j into clauses', (text, clauses) => {
    expect(splitClauses(text)).toEqual(clauses);
  });
});

describe('filling arguments by schema', () => {
  const schema = (properties: InputSchema['properties'], required: string[] = []): InputSchema => ({
    type: 'object',
    properties,
    required,
  });
  const units = { type: 'string', enum: ['m', 'km', 'mi', 'in', 'c', 'f'] };

  it.each([
    {
      name: 'name: value and name=value pairs, coerced to the type',
      schema: schema({ city: { type: 'string' }, days: { type: 'integer' }, metric: { type: 'boolean' } }, ['city']),
      text: 'forecast city: "New York", days=4, metric: yes',
      args: { city: 'New York', days: 4, metric: true },
    },
    {
      name: 'enum values: the one after the parameter name, then the others in order',
      schema: schema({ value: { type: 'number' }, from: units, to: units }, ['value', 'from', 'to']),
      text: 'to mi: convert 5 km',
      args: { value: 5, from: 'km', to: 'mi' },
    },
    {
      name: 'an enum value that is also a word counts only after the parameter name',
      schema: schema({ value: { type: 'number' }, from: units, to: units }, ['value', 'from', 'to']),
      text: 'what is 5 km in mi',
      args: { value: 5, from: 'km', to: 'mi' },
    },
    {
      name: 'a number beside the parameter name, within its bounds',
      schema: schema({ days: { type: 'integer', minimum: 1, maximum: 16 }, top: { type: 'integer' } }),
      text: 'the next three days, top 5 of 40 words',
      args: { days: 3, top: 5 },
    },
    {
      name: 'a number out of bounds is left out',
      schema: schema({ days: { type: 'integer', minimum: 1, maximum: 16 } }),
      text: 'the next 40 days',
      args: {},
    },
    {
      name: 'required numbers in order',
      schema: schema({ latitude: { type: 'number' }, longitude: { type: 'number' } }, ['latitude', 'longitude']),
      text: 'weather at 52.52, 13.41',
      args: { latitude: 52.52, longitude: 13.41 },
    },
    {
      name: 'a string by its pattern, and a date',
      schema: schema(
        {
          dice: { type: 'string', pattern: '^[1-9][0-9]?d[1-9][0-9]{0,2}$' },
          day: { type: 'string', description: 'as YYYY-MM-DD' },
        },
        ['dice'],
      ),
      text: 'Roll 2d20 on 2025-06-02.',
      args: { dice: '2d20', day: '2025-06-02' },
    },
    {
      name: 'quoted strings go to the text parameters in order',
      schema: schema({ title: { type: 'string' }, subtitle: { type: 'string' } }, ['title', 'subtitle']),
      text: 'slug of "One" and \u201cTwo\u201d',
      args: { title: 'One', subtitle: 'Two' },
    },
    {
      name: 'a lone text parameter: the text after a colon',
      schema: schema({ text: { type: 'string' } }, ['text']),
      text: 'Count the words of this: to be or not to be.',
      args: { text: 'to be or not to be' },
    },
    {
      name: 'a lone text parameter: the words after "about", without stop words',
      schema: schema({ query: { type: 'string' } }, ['query']),
      text: 'find my notes about the offsite venue',
      args: { query: 'offsite venue' },
    },
    {
      name: 'a required parameter with a default takes it',
      schema: schema({ unit: { type: 'string', enum: ['celsius', 'fahrenheit'], default: 'celsius' } }, ['unit']),
      text: 'weather please',
      args: { unit: 'celsius' },
    },
  ])('$name', ({ schema: s, text, args }) => {
    expect(fillArguments(s, text).args).toEqual(args);
  });

  it('reports the required parameters it found no value for', () => {
    const result = fillArguments(
      schema({ latitude: { type: 'number' }, longitude: { type: 'number' }, days: { type: 'integer' } }, [
        'latitude',
        'longitude',
      ]),
      'for three days',
    );
    expect(result).toEqual({ args: { days: 3 }, missing: ['latitude', 'longitude'], specific: 1 });
  });

  it('fills URI templates from pairs, listed values, dates and quotes, or not at all', () => {
    expect(listedValues('Meeting notes by topic (release, onboarding)')).toEqual(['release', 'onboarding']);
    expect(
      fillUriTemplate('notes://{topic}', 'Meeting notes by topic (release, onboarding)', 'the onboarding notes'),
    ).toBe('notes://onboarding');
    expect(fillUriTemplate('notes://me/{day}', 'Notes of a day, as YYYY-MM-DD.', 'notes of 2025-06-02')).toBe(
      'notes://me/2025-06-02',
    );
    expect(fillUriTemplate('items://{id}', undefined, 'item id: 42')).toBe('items://42');
    expect(fillUriTemplate('docs://{name}', undefined, 'open "a b/c"')).toBe('docs://a%20b%2Fc');
    expect(fillUriTemplate('docs://{name}', undefined, 'open the docs')).toBeUndefined();
    expect(fillUriTemplate('search://{?q,page}', undefined, 'q: x')).toBeUndefined();
    expect(matchesTemplate('notes://me/{day}', 'notes://me/2025-06-02')).toBe(true);
    expect(matchesTemplate('notes://me/{day}', 'notes://team/handbook')).toBe(false);
  });

  it('finds a value in earlier results by name, of the wanted type', () => {
    const results = [{ results: [{ name: 'Berlin', latitude: '52.52', lon: 13.41 }, { latitude: 1 }] }];
    expect(findInResults(results, 'latitude', 'number')).toBe(52.52);
    expect(findInResults(results, 'longitude', 'number')).toBe(13.41);
    expect(findInResults(results, 'name', 'string')).toBe('Berlin');
    expect(findInResults(results, 'country', 'string')).toBeUndefined();
  });
});

describe('choosing steps', () => {
  let scaffolds: Awaited<ReturnType<typeof scaffoldTemplates>>;
  beforeAll(async () => {
    scaffolds = await scaffoldTemplates();
  });
  afterAll(async () => {
    await scaffolds?.cleanup();
  });

  const describeStep = (step: PlannedStep) => {
    if (step.kind === 'tool')
      return {
        tool: step.tool.name,
        args: fillArguments(step.tool.inputSchema, step.text, { toolWords: toolStems(step.tool) }).args,
      };
    return { read: step.uri };
  };

  it.each([
    {
      file: 'calculator',
      message: 'What is 12 * (3 + 4)?',
      steps: [{ tool: 'evaluate', args: { expression: '12 * (3 + 4)' } }],
    },
    {
      file: 'calculator',
      message: 'Convert 5 km to mi',
      steps: [{ tool: 'convert', args: { value: 5, from: 'km', to: 'mi' } }],
    },
    {
      file: 'calculator',
      message: 'mean and median of 4, 8, 15, 16, 23, 42',
      steps: [{ tool: 'statistics', args: { numbers: [4, 8, 15, 16, 23, 42] } }],
    },
    {
      file: 'calculator',
      message: 'What is 2 + 2 and convert 100 f to c',
      steps: [
        { tool: 'evaluate', args: { expression: '2 + 2' } },
        { tool: 'convert', args: { value: 100, from: 'f', to: 'c' } },
      ],
    },
    { file: 'calculator', message: 'Which constants do you know?', steps: [{ read: 'calc://constants' }] },
    { file: 'calculator', message: 'Tell me a joke', steps: [] },
    {
      file: 'weather',
      message: 'What will the weather be like in Berlin for the next three days?',
      steps: [{ tool: 'get_forecast', args: { days: 3 } }],
    },
    {
      file: 'weather',
      message: 'Is it windy right now at 48.85, 2.35?',
      steps: [{ tool: 'get_current_weather', args: { latitude: 48.85, longitude: 2.35 } }],
    },
    {
      file: 'weather',
      message: 'Where is Lake Tahoe? Use find_location.',
      steps: [{ tool: 'find_location', args: { name: 'Lake Tahoe' } }],
    },
    { file: 'weather', message: 'What do the weather codes mean?', steps: [{ read: 'weather://codes' }] },
    { file: 'notes', message: 'What did I write down today?', steps: [{ read: 'notes://me/today' }] },
    { file: 'notes', message: 'What did I write on 2025-06-02?', steps: [{ read: 'notes://me/2025-06-02' }] },
    {
      file: 'notes',
      message: 'Read notes://team/handbook and search my notes for offsite',
      steps: [{ read: 'notes://team/handbook' }],
    },
    {
      file: 'notes',
      message: 'Search my notes for offsite and show the team handbook',
      steps: [{ tool: 'search_notes', args: { query: 'offsite' } }, { read: 'notes://team/handbook' }],
    },
    { file: 'notes', message: 'who am i', steps: [{ tool: 'whoami', args: {} }] },
    { file: 'notes', message: 'Plan a trip to the moon', steps: [] },
  ])('$file: $message', async ({ file, message, steps }) => {
    const catalog = await catalogOf(exampleFile(file));
    expect(planRequest(catalog, message).map(describeStep)).toEqual(steps);
  });

  it.each([
    {
      template: 'basic',
      message: 'Please say hello to Ada Lovelace.',
      steps: [{ tool: 'greet', args: { name: 'Ada Lovelace' } }],
    },
    { template: 'basic', message: 'What can this server do? Check its help page.', steps: [{ read: 'docs://help' }] },
    {
      template: 'basic',
      message: 'Echo message: ping, count: 2',
      steps: [{ tool: 'echo', args: { message: 'ping', count: 2 } }],
    },
    {
      template: 'advanced',
      message: 'How many words are in this sentence: the quick brown fox?',
      steps: [{ tool: 'text_stats', args: { text: 'the quick brown fox' } }],
    },
    {
      template: 'advanced',
      message: 'What was decided in the release meeting? Check the release notes.',
      steps: [{ read: 'notes://release' }],
    },
    { template: 'advanced', message: 'Summarize the meeting notes', steps: [{ read: undefined }] },
    {
      template: 'custom',
      message: 'What is the URL slug for "Ten Things I Learned About YAML"?',
      steps: [{ tool: 'slugify', args: { title: 'Ten Things I Learned About YAML' } }],
    },
    { template: 'custom', message: 'Roll 3d6 for me.', steps: [{ tool: 'roll_dice', args: { dice: '3d6' } }] },
    { template: 'custom', message: 'How does dice notation work?', steps: [{ read: 'docs://dice' }] },
  ])('$template template: $message', async ({ template, message, steps }) => {
    const catalog = await catalogOf(scaffolds.file(template));
    expect(planRequest(catalog, message).map(describeStep)).toEqual(steps);
  });

  it('sees a resource limited to users only as one of them', async () => {
    const message = 'What are my preferences? Read my profile.';
    expect(planRequest(await catalogOf(scaffolds.file('advanced'), 'alice'), message).map(describeStep)).toEqual([
      { read: 'profile://me' },
    ]);
    expect(planRequest(await catalogOf(scaffolds.file('advanced'), 'carol'), message).map(describeStep)).toEqual([]);
  });

  it('scores rarer and better-placed words higher, and nothing below the threshold is used', () => {
    const catalog: Catalog = {
      tools: [
        {
          name: 'get_weather',
          description: 'Weather for a city',
          inputSchema: { type: 'object', properties: { city: { type: 'string', description: 'a city name' } } },
        },
        {
          name: 'get_time',
          description: 'The time in a city',
          inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
        },
      ],
      resources: [],
      templates: [],
    };
    const scores = scoreCandidates(indexCatalog(catalog), 'weather in a city');
    expect(scores.map((s) => s.candidate.key)).toEqual(['tool:get_weather', 'tool:get_time']);
    expect(scores[0]!.score).toBeGreaterThan(scores[1]!.score);
    // a word only a parameter's description has is not enough on its own
    expect(scoreCandidates(indexCatalog(catalog), 'a name please')[0]!.score).toBeLessThan(MIN_SCORE);
    expect(planRequest(catalog, 'a name please')).toEqual([]);
  });

  it('writes a reply that quotes results and says what it could not do', () => {
    expect(composeReply([])).toBe(NOTHING_FOUND);
    const reply = composeReply([
      { kind: 'call', tool: 'evaluate', args: { expression: '1 + 1' }, outcome: { ok: true, text: '{"result":2}' } },
      { kind: 'call', tool: 'convert', args: {}, outcome: { ok: false, text: 'Invalid arguments' } },
      { kind: 'read', uri: 'docs://big', outcome: { ok: true, text: 'x'.repeat(2100) } },
      { kind: 'needs', tool: 'get_forecast', missing: ['latitude', 'longitude'] },
      { kind: 'limit', limit: 12 },
    ]);
    expect(reply).toContain('I called evaluate with {"expression":"1 + 1"}. It returned:\n{"result":2}');
    expect(reply).toContain('I called convert with no arguments, but it failed:\nInvalid arguments');
    expect(reply).toContain('… (100 more characters)');
    expect(reply).toContain('does not give its latitude and longitude');
    expect(reply).toContain('I stopped after 12 calls');
  });
});
