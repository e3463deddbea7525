import { describe, expect, it } from 'vitest';
import { compileTemplate } from '../../src/definition/template.js';
import { renderUrl, UrlValueError } from '../../src/runtime/server/egress-url.js';

const PROFILE = compileTemplate('https://api.example.com/v1/users/{{args.id}}/profile?fields={{args.fields}}');

function render(template: string, args: Record<string, unknown>): string {
  return renderUrl(compileTemplate(template), { args });
}

describe('URL templates', () => {
  it.each([
    '..',
    '.',
    '%2e%2e',
    '%2E%2e',
    '.%2e',
    '%2e.',
    '%2e',
    '%252e%252e',
    '%25252e%25252e',
    '../x',
    'a/../b',
    '..\\x',
    'a\\..',
    '%2e%2e%2fadmin',
    '%2e%2e/',
  ])('refuses %j as a path segment value', (id) => {
    expect(() => renderUrl(PROFILE, { args: { id, fields: 'name' } })).toThrow(UrlValueError);
  });

  it('says which value is refused and why', () => {
    expect(() => renderUrl(PROFILE, { args: { id: '..' } })).toThrow(
      'the value of {{args.id}} makes a URL path segment "." or ".." (or an encoding of them), which would change the path the call reaches',
    );
  });

  it.each([
    ['42', 'https://api.example.com/v1/users/42/profile?fields=name'],
    ['...', 'https://api.example.com/v1/users/.../profile?fields=name'],
    ['a.b', 'https://api.example.com/v1/users/a.b/profile?fields=name'],
    ['.hidden', 'https://api.example.com/v1/users/.hidden/profile?fields=name'],
    ['a/b', 'https://api.example.com/v1/users/a%2Fb/profile?fields=name'],
    ['x?y#z', 'https://api.example.com/v1/users/x%3Fy%23z/profile?fields=name'],
    ['', 'https://api.example.com/v1/users//profile?fields=name'],
  ])('encodes %j into one segment', (id, expected) => {
    expect(renderUrl(PROFILE, { args: { id, fields: 'name' } })).toBe(expected);
  });

  it('keeps the encoded value one segment: the URL parser does not resolve it', () => {
    expect(new URL(render('http://h/v1/{{args.a}}/p', { a: 'a/b' })).pathname).toBe('/v1/a%2Fb/p');
    expect(new URL(render('http://h/v1/{{args.a}}/p', { a: '%2e%2e-x' })).pathname).toBe('/v1/%252e%252e-x/p');
  });

  it('leaves dots alone in the query and the fragment, and in literal text', () => {
    expect(render('http://h/v1/x?path={{args.p}}#{{args.f}}', { p: '..', f: '.' })).toBe('http://h/v1/x?path=..#.');
    expect(render('http://h/v1/../x/{{args.id}}', { id: '1' })).toBe('http://h/v1/../x/1');
    expect(render('http://h/v1/{{args.id}}.json', { id: '.' })).toBe('http://h/v1/..json');
  });

  it('judges the whole segment a value lands in', () => {
    expect(() => render('http://h/v1/.{{args.id}}/x', { id: '.' })).toThrow(UrlValueError);
    expect(() => render('http://h/v1/{{args.a}}{{args.b}}', { a: '.', b: '.' })).toThrow(UrlValueError);
    expect(() => render('http://h/v1/{{args.a}}', { a: '..' })).toThrow(UrlValueError);
    expect(() => render('http://h/{{args.a}}?q=1', { a: '.' })).toThrow(UrlValueError);
  });

  it('renders a URL without placeholders as written', () => {
    expect(render('http://h/v1/../x', {})).toBe('http://h/v1/../x');
  });
});
