import { describe, expect, it } from 'vitest';
import { compileTemplate, parseTemplateRefs, scanTemplate } from '../../src/definition/template.js';
import { matchesUriTemplate, parseUriTemplate } from '../../src/definition/uri-template.js';

const scope = {
  args: { city: 'Oslo' },
  params: { '0': 'zero', id: '42' },
  user: { id: 'alice' },
  server: { name: 'demo', version: '1.0.0' },
};

describe('one {{...}} grammar for the checker and the runtime', () => {
  it.each([
    ['{{params.0}}', 'zero'],
    ['{{ params.id }}/{{args.city}}', '42/Oslo'],
    ['{{user.id}} on {{server.name}}', 'alice on demo'],
  ])('what the checker accepts in %s, the runtime fills: %s', (text, rendered) => {
    expect(parseTemplateRefs(text).errors).toEqual([]);
    expect(compileTemplate(text).render(scope)).toBe(rendered);
  });

  it.each(['{{env.HOME}}', '{{ a b }}', '{{args.}}'])(
    'what the checker refuses in %s, the runtime leaves as written',
    (text) => {
      expect(parseTemplateRefs(text).errors).toHaveLength(1);
      expect(compileTemplate(text).render(scope)).toBe(text);
    },
  );

  it('cuts a text into literals and placeholders, and says when a {{ is not closed', () => {
    expect(scanTemplate('a {{ args.x }} b {{c')).toEqual({
      parts: ['a ', { expression: 'args.x', raw: '{{ args.x }}' }, ' b {{c'],
      unclosed: true,
    });
  });
});

describe('URI templates, read by the SDK', () => {
  it('modifiers and operators leave the variable names', () => {
    expect(parseUriTemplate('x://{+path}/{id:3}{?q,limit}')).toEqual({ variables: ['path', 'id', 'q', 'limit'] });
  });

  it.each([
    ['notes://{topic}', 'notes://release', true],
    ['notes://{topic}', 'notes://a/b', false],
    ['files://{+path}', 'files://a/b', true],
    ['docs://guide', 'docs://guide', true],
    ['docs://guide', 'docs://other', false],
    ['notes://{topic', 'notes://x', false],
  ])('%s serves %s: %s', (template, uri, expected) => {
    expect(matchesUriTemplate(template, uri)).toBe(expected);
  });
});
