import { describe, expect, it } from 'vitest';
import { joinCallJson } from '../../../src/cli/specs/mcp.js';
import { launcherOf, clientConfigs } from '../../../src/cli/steps/dev-client-config.js';
import { missingArguments, toolArguments, type ArgumentSchema } from '../../../src/cli/steps/tool-arguments.js';

const schema: ArgumentSchema = {
  type: 'object',
  properties: {
    latitude: { type: 'number' },
    days: { type: 'integer' },
    metric: { type: 'boolean' },
    city: { type: 'string' },
    tags: { type: 'array', items: { type: 'string' } },
    points: { type: 'array', items: { type: 'number' } },
    where: { type: 'object' },
    note: { type: ['string', 'null'] },
  },
  required: ['latitude', 'city'],
};

describe('toolArguments', () => {
  it.each([
    [['latitude=52.5'], { latitude: 52.5 }],
    [['days=3'], { days: 3 }],
    [['metric=true'], { metric: true }],
    [['metric=no'], { metric: false }],
    [['city=52'], { city: '52' }],
    [['city=a=b'], { city: 'a=b' }],
    [['tags=a', 'tags=b'], { tags: ['a', 'b'] }],
    [['tags=["x","y"]'], { tags: ['x', 'y'] }],
    [['points=1', 'points=2.5'], { points: [1, 2.5] }],
    [['where={"lat":1}'], { where: { lat: 1 } }],
    [['note=hi'], { note: 'hi' }],
  ])('%j becomes %j', (pairs, expected) => {
    expect(toolArguments(schema, pairs, undefined)).toEqual({ values: expected, unknown: [], problems: [] });
  });

  it.each([
    [['latitude=north'], 'latitude', '"north" is not a number'],
    [['days=1.5'], 'days', '"1.5" is not a whole number'],
    [['metric=maybe'], 'metric', '"maybe" is not true or false'],
    [['where=[1]'], 'where', '"[1]" is not a JSON object'],
    [['points=x'], 'points[0]', '"x" is not a number'],
    [['city=a', 'city=b'], 'city', 'given 2 times, but it takes one value, not a list'],
    [['city'], '--arg', '"city" is not key=value (such as --arg city=Berlin)'],
  ])('%j is refused at %s', (pairs, path, message) => {
    expect(toolArguments(schema, pairs, undefined).problems).toEqual([{ path, message }]);
  });

  it('puts --json under the pairs, and names keys the schema does not list', () => {
    const result = toolArguments(schema, ['city=Berlin', 'extra=1'], '{"city": "Paris", "latitude": 1, "other": true}');
    expect(result.values).toEqual({ city: 'Berlin', latitude: 1, other: true, extra: '1' });
    expect(result.unknown.sort()).toEqual(['extra', 'other']);
    expect(toolArguments(schema, [], '[1]').problems).toEqual([
      { path: '--json', message: 'must be a JSON object, such as {"city": "Berlin"}' },
    ]);
    expect(toolArguments(schema, [], '{').problems[0]?.path).toBe('--json');
  });

  it('lists the required arguments left out', () => {
    expect(missingArguments(schema, { city: 'x' })).toEqual(['latitude']);
    expect(missingArguments(undefined, {})).toEqual([]);
  });
});

describe('joinCallJson', () => {
  it('keeps --json alone for output, and joins a --json object of call to its value', () => {
    expect(joinCallJson(['call', 'f.yaml', 't', '--json', '{"a":1}'])).toEqual([
      'call',
      'f.yaml',
      't',
      '--json={"a":1}',
    ]);
    expect(joinCallJson(['--json', 'call', 'f.yaml', 't'])).toEqual(['--json', 'call', 'f.yaml', 't']);
    expect(joinCallJson(['call', 'f.yaml', 't', '--json', '--arg', 'a=1'])).toEqual([
      'call',
      'f.yaml',
      't',
      '--json',
      '--arg',
      'a=1',
    ]);
    expect(joinCallJson(['ls', '--json'])).toEqual(['ls', '--json']);
  });
});

describe('dev client configurations', () => {
  it('run this installation by absolute paths, and npx only from an npx cache, pinned', () => {
    expect(launcherOf('/opt/mcpctl', '/usr/bin/node', '1.2.3')).toEqual({
      command: '/usr/bin/node',
      args: ['/opt/mcpctl/bin/mcpctl.cjs'],
    });
    expect(launcherOf('/home/u/.npm/_npx/ab12/node_modules/mcpctl', '/usr/bin/node', '1.2.3')).toEqual({
      command: 'npx',
      args: ['-y', 'mcpctl@1.2.3'],
    });
  });

  it('fill env values from the environment but never a secret', () => {
    const configs = clientConfigs({
      name: 'notes',
      definitionFile: '/w/server.yaml',
      mcpUrl: 'http://127.0.0.1:4000/mcp',
      launcher: { command: '/usr/bin/node', args: ['/opt/mcpctl/bin/mcpctl.cjs'] },
      needsEnv: ['NOTES_URL', 'NOTES_API_KEY', 'UNSET_URL'],
      bearerFrom: ['MCP_TOKEN'],
      env: { NOTES_URL: 'http://127.0.0.1:9000', NOTES_API_KEY: 'k-0123456789', MCP_TOKEN: 't-0123456789' },
    });
    expect(configs.launched.mcpServers.notes?.env).toEqual({
      NOTES_URL: 'http://127.0.0.1:9000',
      NOTES_API_KEY: '<NOTES_API_KEY>',
      UNSET_URL: '<UNSET_URL>',
    });
    expect(configs.byUrl.mcpServers.notes?.headers).toEqual({ Authorization: 'Bearer <MCP_TOKEN>' });
    expect(JSON.stringify(configs)).not.toMatch(/k-0123456789|t-0123456789/);
    expect(configs.placeholders).toEqual(['NOTES_API_KEY', 'UNSET_URL', 'MCP_TOKEN']);
  });
});
