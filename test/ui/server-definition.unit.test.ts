import { describe, expect, it } from 'vitest';
import { anchorId, placeOf, readableJson, toServerDefinition } from '../../src/ui/server-definition.js';

describe('a server definition as the page reads it', () => {
  it('reads every item with its place, tolerant of what a service leaves out', () => {
    const server = toServerDefinition({
      mcp_id: 'mcp_1',
      name: 'weather',
      version: '1.0.0',
      file: 'examples/weather/server.yaml',
      tools: [
        {
          name: 'get_forecast',
          title: 'Daily forecast',
          description: 'Forecasts',
          inputSchema: { type: 'object' },
          handler: 'http',
          line: 47,
          column: 5,
        },
        { name: 'bare' },
        { title: 'no name: left out' },
        'not an object',
      ],
      resources: [{ uri: 'weather://codes', name: 'codes', mimeType: 'text/markdown', line: 66, column: 5 }],
      prompts: [{ name: 'plan', arguments: [{ name: 'place' }], line: 'x' }],
    });
    expect(server).toMatchObject({ mcpId: 'mcp_1', name: 'weather', version: '1.0.0', description: undefined });
    expect(server.tools.map((tool) => tool.key)).toEqual(['get_forecast', 'bare']);
    expect(server.tools[0]).toEqual({
      kind: 'tool',
      key: 'get_forecast',
      label: 'Daily forecast',
      description: 'Forecasts',
      handler: 'http',
      mimeType: undefined,
      details: [{ label: 'Input schema', value: { type: 'object' } }],
      line: 47,
      column: 5,
    });
    expect(server.resources[0]).toMatchObject({ key: 'weather://codes', label: 'codes', mimeType: 'text/markdown' });
    expect(server.prompts[0]).toMatchObject({ details: [{ label: 'Arguments', value: [{ name: 'place' }] }] });
    expect(server.prompts[0]!.line).toBeUndefined();
    expect(toServerDefinition(null)).toMatchObject({ tools: [], resources: [], prompts: [], file: undefined });
  });

  it('says where an item is written only when the service said so', () => {
    expect(placeOf('server.yaml', { line: 14, column: 5 })).toBe('server.yaml:14:5');
    expect(placeOf('server.yaml', { line: 14, column: undefined })).toBe('server.yaml:14');
    expect(placeOf(undefined, { line: 14, column: 5 })).toBeUndefined();
    expect(placeOf('server.yaml', { line: undefined, column: undefined })).toBeUndefined();
  });

  it('builds plain element ids from any name, and never the same id from two names', () => {
    expect(anchorId('tool', 'get_forecast')).toBe('tool-get_forecast');
    expect(anchorId('resource', 'weather://codes')).toBe('resource-weather.3a..2f..2f.codes');
    const names = ['a b', 'a_20', 'a.20.', 'a"><img>', 'ü', '💥'];
    const ids = names.map((name) => anchorId('resource', name));
    expect(new Set(ids).size).toBe(names.length);
    for (const id of ids) expect(id).toMatch(/^resource-[A-Za-z0-9_.-]+$/);
  });

  it('shows JSON indented', () => {
    expect(readableJson({ type: 'object', required: ['a'] })).toBe(
      '{\n  "type": "object",\n  "required": [\n    "a"\n  ]\n}',
    );
  });
});
