import { describe, expect, it } from 'vitest';
import { EnvSyntaxError, MissingEnvVarError } from '../../src/definition/errors.js';
import {
  findEnvSyntaxError,
  listEnvRefs,
  parseEnvRefs,
  resolveEnvDeep,
  resolveEnvRefs,
} from '../../src/definition/interpolate.js';

const env = { TOKEN: 's3cret', EMPTY: '', HOST: 'example.com', PORT: '8080' };

describe('resolveEnvRefs', () => {
  it.each([
    ['no reference', 'plain text', 'plain text'],
    ['a whole value', '${TOKEN}', 's3cret'],
    ['inside text', 'Bearer ${TOKEN}', 'Bearer s3cret'],
    ['two references', 'https://${HOST}:${PORT}/x', 'https://example.com:8080/x'],
    ['a default when unset', '${MISSING:-fallback}', 'fallback'],
    ['a default when empty', '${EMPTY:-fallback}', 'fallback'],
    ['the value over its default', '${TOKEN:-fallback}', 's3cret'],
    ['an empty default', '${MISSING:-}', ''],
    ['a default with symbols', '${MISSING:-https://a.b/c?d=e}', 'https://a.b/c?d=e'],
    ['a set but empty variable without default', 'x${EMPTY}y', 'xy'],
    ['an escaped reference', '$${TOKEN}', '${TOKEN}'],
    ['an escape beside a reference', '$${A} ${TOKEN}', '${A} s3cret'],
    ['a lone dollar', 'costs $5 or $$', 'costs $5 or $$'],
    ['a {{template}} left alone', '{{args.x}} ${HOST}', '{{args.x}} example.com'],
  ])('resolves %s', (_, value, expected) => {
    expect(resolveEnvRefs(value, env, 'field')).toBe(expected);
  });

  it('names the variable and the field when a variable is missing', () => {
    const error = (() => {
      try {
        resolveEnvRefs('Bearer ${API_TOKEN}', env, 'deploy.env_vars.AUTH');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(MissingEnvVarError);
    expect((error as MissingEnvVarError).variable).toBe('API_TOKEN');
    expect((error as MissingEnvVarError).message).toBe(
      'environment variable API_TOKEN is not set (used by deploy.env_vars.AUTH)',
    );
    // what the environment lacks is configuration
    expect((error as MissingEnvVarError).exitCode).toBe(3);
    expect((error as MissingEnvVarError).hint).toContain('${API_TOKEN:-value}');
  });

  it.each([
    ['an unclosed reference', 'x ${TOKEN', /unclosed \$\{/],
    ['an empty name', '${}', /not a variable name/],
    ['a name with a dash', '${MY-VAR}', /"MY-VAR" is not a variable name/],
    ['a name starting with a digit', '${1X}', /not a variable name/],
    ['another shell operator', '${X:=y}', /not a variable name/],
  ])('rejects %s', (_, value, message) => {
    expect(() => resolveEnvRefs(value, env, 'auth.token')).toThrow(EnvSyntaxError);
    expect(() => resolveEnvRefs(value, env, 'auth.token')).toThrow(message);
    expect(findEnvSyntaxError(value)).toMatch(message);
  });
});

describe('parseEnvRefs', () => {
  it('splits text and references', () => {
    expect(parseEnvRefs('a ${B} c ${D:-e}')).toEqual([
      { kind: 'text', text: 'a ' },
      { kind: 'ref', name: 'B' },
      { kind: 'text', text: ' c ' },
      { kind: 'ref', name: 'D', fallback: 'e' },
    ]);
  });
});

describe('resolveEnvDeep', () => {
  it('resolves strings in nested objects and arrays and keeps other values', () => {
    const value = { url: 'https://${HOST}', list: ['${PORT}', 3, true, null], nested: { deep: { token: '${TOKEN}' } } };
    expect(resolveEnvDeep(value, env)).toEqual({
      url: 'https://example.com',
      list: ['8080', 3, true, null],
      nested: { deep: { token: 's3cret' } },
    });
  });

  it('leaves the input untouched', () => {
    const value = { a: '${TOKEN}' };
    resolveEnvDeep(value, env);
    expect(value.a).toBe('${TOKEN}');
  });

  it.each([
    [['deploy'], { env_vars: { API_KEY: '${NOPE}' } }, 'deploy.env_vars.API_KEY'],
    ['deploy', { env_vars: { API_KEY: '${NOPE}' } }, 'deploy.env_vars.API_KEY'],
    [['tools', 2, 'handler'], { command: ['x', '${NOPE}'] }, 'tools[2].handler.command[1]'],
    [[], { headers: { 'X-Api-Key': '${NOPE}' } }, 'headers.X-Api-Key'],
    [[], { env: { 'two words': '${NOPE}' } }, 'env["two words"]'],
  ] as const)('reports the full path of a missing variable from base %j', (base, value, path) => {
    expect(() => resolveEnvDeep(value, env, base as never)).toThrow(
      `environment variable NOPE is not set (used by ${path})`,
    );
  });
});

describe('listEnvRefs', () => {
  it('lists each name once, in order of first use, including those with defaults', () => {
    const value = { a: '${B} ${A}', b: ['${A:-x}', { c: 'https://${C}' }], d: '$${ESCAPED}', e: 42, f: '${bad-name}' };
    expect(listEnvRefs(value)).toEqual(['B', 'A', 'C']);
  });

  it('with withoutDefault, lists only the names some reference gives no default', () => {
    const value = { a: '${A:-x}', b: ['${B}', '${A:-y}'], c: { d: '${C:-z} ${B}' } };
    expect(listEnvRefs(value, { withoutDefault: true })).toEqual(['B']);
    expect(listEnvRefs({ a: '${A:-x}', b: '${A}' }, { withoutDefault: true })).toEqual(['A']);
  });

  it('returns nothing for values without references', () => {
    expect(listEnvRefs({ a: 'plain', b: [1, 2] })).toEqual([]);
  });
});
