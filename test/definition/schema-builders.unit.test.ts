import { describe, expect, it } from 'vitest';
import { serverDefinition, serverDefinitionFor } from '../../src/definition/schema-builders.js';
import { ServerDefinition } from '../../src/definition/schema.js';

const tool = { name: 'a', description: 'look up a record by its id', inputSchema: { type: 'object' } };
const inputs: unknown[] = [
  { name: 'x', template: 'basic', tools: [tool] },
  { name: 'x', template: 'basic', tools: [tool], tests: { cases: [{ name: 'c', message: 'm' }] } },
  {
    name: 'x',
    template: 'basic',
    resources: [{ uri: 'notes://a', name: 'a', description: 'd', source: { type: 'text', text: 't' } }],
    deploy: {},
  },
  {
    name: 'x',
    template: 'basic',
    resorces: [],
    tests: 3,
    auth: { type: 'basic' },
    prompts: [{ name: 'p', messages: [] }],
  },
  { name: 'x', template: 'basic', resources: undefined, deploy: { scaling: { min_instances: -1 } } },
  {
    name: 'x',
    template: 'basic',
    auth: { type: 'bearer', token: '${T}' },
    resources: [],
    prompts: [],
    deploy: {},
    tests: { cases: [{ name: 'c', message: 'm' }] },
  },
  {
    name: 'x',
    template: 'basic',
    tools: [{ ...tool, scopes: ['a:write'] }],
    auth: { type: 'oauth', issuer: 'https://a.example.com/', scopes: [] },
  },
  {
    name: 'x',
    template: 'basic',
    tools: [tool],
    auth: { type: 'oauth', issuer: 'http://a.example.com/', scopes: ['a b'] },
  },
  { name: 'x', template: 'basic', tools: [tool], auth: { type: 'bearer', token: '${A}', tokens: ['${B}'] } },
  { name: 'x', template: 'basic', tools: [tool], auth: { type: 'none' } },
  ['a'],
  'name: x',
];

describe('serverDefinitionFor', () => {
  it('parses as the whole schema does, building only the sections the definition has', () => {
    expect(serverDefinition()).toBe(ServerDefinition);
    for (const input of inputs) {
      const whole = ServerDefinition.safeParse(input);
      const part = serverDefinitionFor(input).safeParse(input);
      expect(part.success).toBe(whole.success);
      expect(part.success ? part.data : part.error.issues).toEqual(whole.success ? whole.data : whole.error?.issues);
    }
  });

  it('keeps one schema for each set of sections', () => {
    expect(serverDefinitionFor({ name: 'x', tests: {} })).toBe(
      serverDefinitionFor({ name: 'y', tests: { cases: [] } }),
    );
    expect(serverDefinitionFor({ name: 'x' })).not.toBe(serverDefinitionFor({ name: 'x', tests: {} }));
  });
});
