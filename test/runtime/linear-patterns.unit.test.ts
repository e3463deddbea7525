/**
 * Patterns of argument schemas run on RE2 (linear time): a catastrophic-backtracking pattern
 * against a crafted argument is answered at once, and a pattern RE2 cannot run is refused when
 * the definition is validated.
 */
import { describe, expect, it } from 'vitest';
import { validateJsonSchema } from '../../src/definition/json-schema.js';
import { createSchemaCompiler } from '../../src/runtime/server/validate-args.js';

const EVIL = `${'a'.repeat(50_000)}!`;

describe('argument patterns', () => {
  it('validates a crafted argument against ^(a+)+$ on the linear engine (RegExp would not finish)', () => {
    const validate = createSchemaCompiler()({
      type: 'object',
      properties: { s: { type: 'string', pattern: '^(a+)+$' } },
    });
    expect(validate({ s: EVIL })).toEqual({ ok: false, problems: ['s must match pattern "^(a+)+$"'] });
    expect(validate({ s: 'aaaa' }).ok).toBe(true);
  });

  it('runs patternProperties on the linear engine too', () => {
    const validate = createSchemaCompiler()({ type: 'object', patternProperties: { '^(a+)+$': { type: 'number' } } });
    expect(validate({ [EVIL]: 'x' }).ok).toBe(true);
    expect(validate({ aaa: 'x' }).ok).toBe(false);
  });

  it('refuses a backreference or a lookaround when the definition is validated, saying why', () => {
    expect(validateJsonSchema({ type: 'object', properties: { s: { type: 'string', pattern: '^(a)\\1$' } } })).toEqual([
      {
        path: ['properties', 's', 'pattern'],
        message: expect.stringMatching(
          /^backreferences .* not supported: patterns run on a linear-time engine/,
        ) as string,
      },
    ]);
    expect(validateJsonSchema({ type: 'object', patternProperties: { '^(?!x)': {} } })[0]?.message).toMatch(
      /lookahead and lookbehind/,
    );
  });
});
