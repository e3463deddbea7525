import { Ajv } from 'ajv';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ServerDefinition, toEditorJsonSchema } from '../../src/definition/schema.js';

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

  const OAUTH = { type: 'oauth', issuer: 'https://a.example.com/', scopes: [] };
  it.each<[string, unknown, boolean]>([
    ['bearer with token', { type: 'bearer', token: '${T}' }, true],
    ['bearer with tokens', { type: 'bearer', tokens: ['${T}', '${U}'] }, true],
    ['bearer with token and tokens', { type: 'bearer', token: '${T}', tokens: ['${U}'] }, false],
    ['bearer with neither', { type: 'bearer' }, false],
    ['oauth', OAUTH, true],
    ['oauth without issuer', { type: 'oauth', scopes: [] }, false],
    ['an http issuer', { ...OAUTH, issuer: 'http://a.example.com/' }, false],
    ['an http issuer on localhost', { ...OAUTH, issuer: 'http://localhost:8080/realms/a' }, true],
    ['an http issuer on 127.0.0.2', { ...OAUTH, issuer: 'http://127.0.0.2' }, true],
    ['an http issuer on [::1]', { ...OAUTH, issuer: 'http://[::1]:9000/' }, true],
    [
      'an http audience on a .localhost name',
      { ...OAUTH, audience: 'http://notes.production.localhost:47321/mcp' },
      true,
    ],
    [
      'an http issuer on a name that ends in localhost',
      { ...OAUTH, issuer: 'http://evil-localhost.example.com/' },
      false,
    ],
    ['an issuer from the environment', { ...OAUTH, issuer: 'http://${AUTH_HOST}/' }, true],
    ['a jwks_uri without scheme', { ...OAUTH, jwks_uri: 'a.example.com/jwks' }, false],
    ['a scope with a space', { ...OAUTH, scopes: ['a b'] }, false],
    ['none', { type: 'none' }, true],
  ])('judges auth %s as the loader does', (_, auth, valid) => {
    const input = { name: 'a', template: 'basic', auth };
    expect(validate(input)).toBe(valid);
    expect(ServerDefinition.safeParse(input).success).toBe(valid);
  });

  it.each([
    ['an unknown top-level field', { name: 'a', template: 'basic', colour: 'blue' }],
    ['a wrong template', { name: 'a', template: 'fancy' }],
    ['a tool without inputSchema', { name: 'a', template: 'basic', tools: [{ name: 't', description: 'd' }] }],
    [
      'a resource uri without scheme',
      { name: 'a', template: 'basic', resources: [{ uri: 'x', name: 'x', description: 'd' }] },
    ],
  ])('rejects %s, as the loader does', (_, value) => {
    expect(validate(value)).toBe(false);
  });
});
