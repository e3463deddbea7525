import { describe, expect, it } from 'vitest';
import { collectRefs, compileDeep, compileTemplate, encodeUrlValue } from '../../src/definition/template.js';

const scope = {
  args: { name: 'Ada', days: 3, tags: ['a', 'b'], nested: { city: 'Oslo' }, empty: null },
  params: { id: '42' },
  user: { id: 'alice' },
  server: { name: 'demo', version: '1.0.0' },
};

describe('compileTemplate', () => {
  it.each([
    ['Hello {{args.name}}', 'Hello Ada'],
    ['{{ args.name }} has {{args.days}} days', 'Ada has 3 days'],
    ['{{args.nested.city}}', 'Oslo'],
    ['{{args.tags}}', '["a","b"]'],
    ['{{args.empty}}|{{args.missing}}|', '||'],
    ['{{params.id}} for {{user.id}} on {{server.name}} {{server.version}}', '42 for alice on demo 1.0.0'],
    ['{{args}}', JSON.stringify(scope.args)],
    ['no placeholders {{ not one', 'no placeholders {{ not one'],
    ['{{args.__proto__}}', ''],
  ])('%s → %s', (source, expected) => {
    expect(compileTemplate(source).render(scope)).toBe(expected);
  });

  it('encodes only the substituted values', () => {
    const url = compileTemplate('https://api.test/v1/{{args.q}}?x={{args.q}}');
    expect(url.render({ args: { q: 'a b/c?d=1&e' } }, encodeUrlValue)).toBe(
      'https://api.test/v1/a%20b%2Fc%3Fd%3D1%26e?x=a%20b%2Fc%3Fd%3D1%26e',
    );
  });

  it('lists its references', () => {
    expect(compileTemplate('{{user.id}}/{{ params.id }}').refs).toEqual(['user.id', 'params.id']);
    expect(compileTemplate('plain').dynamic).toBe(false);
  });
});

describe('compileDeep', () => {
  it('keeps the type of a whole placeholder and renders strings inside objects and arrays', () => {
    const render = compileDeep({
      days: '{{args.days}}',
      label: '{{args.days}} days',
      list: ['{{user.id}}', 7, true],
      nested: { tags: '{{args.tags}}' },
    });
    expect(render(scope)).toEqual({ days: 3, label: '3 days', list: ['alice', 7, true], nested: { tags: ['a', 'b'] } });
  });

  it('collects references at any depth', () => {
    expect([...collectRefs({ a: ['{{args.x}}', { b: '{{user.id}}' }] })]).toEqual(['args.x', 'user.id']);
  });
});
