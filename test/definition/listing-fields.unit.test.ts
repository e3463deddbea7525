import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/shared/errors.js';
import { parseDefinition } from '../../src/definition/load.js';
import { scanHeaderParams } from '../../src/definition/header-params.js';

/** Parses text as a definition at /defs/server.yaml and returns its problems (none when valid). */
async function problemsOf(source: string): Promise<Array<{ where: string; path: string; message: string }>> {
  try {
    await parseDefinition(source, { file: '/defs/server.yaml', shown: 'server.yaml' });
    return [];
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    return error.problems.map((p) => ({ where: p.where ?? '', path: p.path ?? '', message: p.message }));
  }
}

const TOOL = `tools:
  - name: t
    description: Looks things up
    inputSchema: { type: object }
`;
const ICON = 'https://example.com/icon.png';

describe('icons and caching hints in a definition', () => {
  it('accepts them on the server, tools, resources, templates and prompts, and keeps them', async () => {
    const source = `name: a
template: basic
icons: [{ src: "${ICON}", mimeType: image/png, sizes: [48x48, any], theme: dark }]
cache: { ttl_ms: 60000, scope: public }
tools:
  - name: t
    description: Looks things up
    icons: [{ src: "data:image/svg+xml;base64,PHN2Zy8+" }]
    inputSchema: { type: object }
resources:
  - uri: docs://a
    name: a
    description: A
    icons: [{ src: "${ICON}" }]
    cache: { ttl_ms: 0 }
  - uri: docs://{id}
    name: b
    description: B
    icons: [{ src: "${ICON}" }]
prompts:
  - name: p
    icons: [{ src: "${ICON}" }]
    messages: [{ role: user, content: hi }]
`;
    const loaded = await parseDefinition(source, { file: '/defs/server.yaml' });
    expect(loaded.definition.icons).toEqual([
      { src: ICON, mimeType: 'image/png', sizes: ['48x48', 'any'], theme: 'dark' },
    ]);
    expect(loaded.definition.cache).toEqual({ ttl_ms: 60000, scope: 'public' });
    expect(loaded.definition.resources?.[0]?.cache).toEqual({ ttl_ms: 0 });
    expect(loaded.definition.prompts?.[0]?.icons).toHaveLength(1);
  });

  it.each<[string, string, { where: string; path: string; message: RegExp }]>([
    [
      'an icon over http',
      `name: a\ntemplate: basic\nicons: [{ src: "http://example.com/i.png" }]\n${TOOL}`,
      { where: 'server.yaml:3:16', path: 'icons[0].src', message: /https:\/\/ URL or a data: URI/ },
    ],
    [
      'an icon of another media type',
      `name: a\ntemplate: basic\nicons: [{ src: "${ICON}", mimeType: text/html }]\n${TOOL}`,
      { where: 'server.yaml:3:58', path: 'icons[0].mimeType', message: /image media type/ },
    ],
    [
      'an icon size that is not WIDTHxHEIGHT',
      `name: a\ntemplate: basic\nicons: [{ src: "${ICON}", sizes: [big] }]\n${TOOL}`,
      { where: 'server.yaml:3:56', path: 'icons[0].sizes[0]', message: /WIDTHxHEIGHT/ },
    ],
    [
      'an unknown theme',
      `name: a\ntemplate: basic\nicons: [{ src: "${ICON}", theme: blue }]\n${TOOL}`,
      { where: 'server.yaml:3:55', path: 'icons[0].theme', message: /light, dark/ },
    ],
    [
      'a negative ttl',
      `name: a\ntemplate: basic\ncache: { ttl_ms: -1 }\n${TOOL}`,
      { where: 'server.yaml:3:18', path: 'cache.ttl_ms', message: /0|small/ },
    ],
    [
      'a ttl of more than a day',
      `name: a\ntemplate: basic\ncache: { ttl_ms: 86400001 }\n${TOOL}`,
      { where: 'server.yaml:3:18', path: 'cache.ttl_ms', message: /86400000|big/ },
    ],
    [
      'an unknown scope',
      `name: a\ntemplate: basic\ncache: { ttl_ms: 1, scope: shared }\n${TOOL}`,
      { where: 'server.yaml:3:28', path: 'cache.scope', message: /public, private/ },
    ],
    [
      'a public cache of a resource per user',
      `name: a\ntemplate: basic\nresources:\n  - uri: docs://me\n    name: me\n    description: Mine\n    per_user: true\n    cache: { ttl_ms: 1, scope: public }\n`,
      { where: 'server.yaml:8:32', path: 'resources[0].cache.scope', message: /depends on the caller/ },
    ],
    [
      'a public cache of a resource only some users may read',
      `name: a\ntemplate: basic\nresources:\n  - uri: docs://me\n    name: me\n    description: Mine\n    users: [ada]\n    cache: { ttl_ms: 1, scope: public }\n`,
      { where: 'server.yaml:8:32', path: 'resources[0].cache.scope', message: /depends on the caller/ },
    ],
    [
      'an x-mcp-header on an object',
      `name: a\ntemplate: basic\ntools:\n  - name: t\n    description: Looks things up\n    inputSchema:\n      type: object\n      properties:\n        q: { type: object, x-mcp-header: Q }\n`,
      {
        where: 'server.yaml:9:42',
        path: 'tools[0].inputSchema.properties.q.x-mcp-header',
        message: /string, integer or boolean/,
      },
    ],
    [
      'an x-mcp-header that is not a header name',
      `name: a\ntemplate: basic\ntools:\n  - name: t\n    description: Looks things up\n    inputSchema:\n      type: object\n      properties:\n        q: { type: string, x-mcp-header: "a b" }\n`,
      { where: 'server.yaml:9:42', path: 'tools[0].inputSchema.properties.q.x-mcp-header', message: /header name/ },
    ],
  ])('refuses %s, at its position', async (_, source, want) => {
    const problems = await problemsOf(source);
    expect(problems, JSON.stringify(problems)).toHaveLength(1);
    expect(problems[0]!.where).toBe(want.where);
    expect(problems[0]!.path).toBe(want.path);
    expect(problems[0]!.message).toMatch(want.message);
  });
});

describe('scanHeaderParams', () => {
  it('finds annotated properties at any depth through properties', () => {
    const scanned = scanHeaderParams({
      type: 'object',
      properties: {
        region: { type: 'string', 'x-mcp-header': 'Region' },
        filter: { type: 'object', properties: { limit: { type: 'integer', 'x-mcp-header': 'Limit' } } },
      },
    });
    expect(scanned.problems).toEqual([]);
    expect(scanned.params).toEqual([
      { path: ['region'], header: 'Region', type: 'string' },
      { path: ['filter', 'limit'], header: 'Limit', type: 'integer' },
    ]);
  });

  it.each([
    ['under anyOf', { type: 'object', anyOf: [{ properties: { a: { type: 'string', 'x-mcp-header': 'A' } } }] }],
    [
      'under items',
      { type: 'object', properties: { a: { type: 'array', items: { type: 'string', 'x-mcp-header': 'A' } } } },
    ],
    ['on the schema itself', { type: 'object', 'x-mcp-header': 'A' }],
    [
      'twice with names that differ only in case',
      {
        type: 'object',
        properties: { a: { type: 'string', 'x-mcp-header': 'Name' }, b: { type: 'string', 'x-mcp-header': 'name' } },
      },
    ],
  ])('refuses an annotation %s', (_, schema) => {
    expect(scanHeaderParams(schema).problems).toHaveLength(1);
  });
});
