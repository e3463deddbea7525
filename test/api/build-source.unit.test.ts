import { describe, expect, it } from 'vitest';
import { BuildRequest, BuildSource } from '../../src/api/build-schema.js';
import { LIMITS } from '../../src/definition/schema.js';

const at = { line: 3, column: 5 };
const many = (count: number, key: (i: number) => string) =>
  Object.fromEntries(Array.from({ length: count }, (_, i) => [key(i), at]));

describe('the source of a build request', () => {
  it('takes a file with the positions of its tools, resources and prompts', () => {
    const source = {
      file: 'examples/weather/server.yaml',
      tools: { get_forecast: at },
      resources: { 'weather://codes': at },
      prompts: { plan_outing: at },
    };
    expect(BuildSource.parse(source)).toEqual(source);
    const request = BuildRequest.parse({ name: 'weather', template: 'basic', source: { file: 'server.yaml' } });
    expect(request.source).toEqual({ file: 'server.yaml' });
  });

  it.each<[string, unknown]>([
    ['no file', { tools: {} }],
    ['an empty file', { file: '' }],
    ['a file over 1024 characters', { file: 'a'.repeat(1025) }],
    ['an unknown field', { file: 'x.yaml', handlers: {} }],
    ['a position of line 0', { file: 'x.yaml', tools: { a: { line: 0, column: 1 } } }],
    ['a fractional column', { file: 'x.yaml', tools: { a: { line: 1, column: 1.5 } } }],
    ['a position with more fields', { file: 'x.yaml', tools: { a: { line: 1, column: 1, end: 2 } } }],
    ['a tool name over 64 characters', { file: 'x.yaml', tools: { ['t'.repeat(65)]: at } }],
    ['more tools than a server may have', { file: 'x.yaml', tools: many(LIMITS.tools + 1, (i) => `t${i}`) }],
    [
      'more resources than a server may have',
      { file: 'x.yaml', resources: many(LIMITS.resources + 1, (i) => `r://${i}`) },
    ],
    ['more prompts than a server may have', { file: 'x.yaml', prompts: many(LIMITS.prompts + 1, (i) => `p${i}`) }],
  ])('refuses %s', (_what, source) => {
    expect(BuildSource.safeParse(source).success).toBe(false);
  });

  it('takes as many entries as a server may have items', () => {
    const source = {
      file: 'x'.repeat(1024),
      tools: many(LIMITS.tools, (i) => `t${i}`),
      resources: many(LIMITS.resources, (i) => `r://${i}`),
      prompts: many(LIMITS.prompts, (i) => `p${i}`),
    };
    expect(BuildSource.safeParse(source).success).toBe(true);
  });
});
