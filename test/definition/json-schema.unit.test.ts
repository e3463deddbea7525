import { Ajv } from 'ajv';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { toEditorJsonSchema } from '../../src/definition/schema.js';

const root = join(import.meta.dirname, '..', '..');

describe('schema/mcpctl.schema.json', () => {
  it('is what the zod schema generates now (run `npm run schema` after changing src/definition/schema.ts)', async () => {
    const committed = await readFile(join(root, 'schema', 'mcpctl.schema.json'), 'utf8');
    expect(committed).toBe(`${JSON.stringify(toEditorJsonSchema(), null, 2)}\n`);
  });

  it('is a draft-07 schema that editors can compile', () => {
    const schema = toEditorJsonSchema();
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(() => new Ajv({ strict: false }).compile(schema)).not.toThrow();
  });

  const validate = new Ajv({ strict: false, allErrors: true }).compile(toEditorJsonSchema());

  it.each(['basic', 'advanced', 'custom'])('accepts the %s template', async (template) => {
    const text = (await readFile(join(root, 'templates', template, 'server.yaml'), 'utf8'))
      .replaceAll('__SERVER_NAME__', 'demo')
      .replaceAll('__TOOL_NAME__', 'first_tool')
      .replaceAll('__TOOL_EXPORT__', 'firstTool');
    const ok = validate(parse(text));
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  it('allows top-level x- keys, as the loader does', () => {
    expect(validate({ name: 'a', template: 'basic', 'x-anchors': { any: 'thing' } })).toBe(true);
  });

  it.each([
    ['an unknown top-level field', { name: 'a', template: 'basic', colour: 'blue' }],
    ['a wrong template', { name: 'a', template: 'fancy' }],
    ['a tool without inputSchema', { name: 'a', template: 'basic', tools: [{ name: 't', description: 'd' }] }],
    ['a resource uri without scheme', { name: 'a', template: 'basic', resources: [{ uri: 'x', name: 'x', description: 'd' }] }],
  ])('rejects %s, as the loader does', (_, value) => {
    expect(validate(value)).toBe(false);
  });
});
