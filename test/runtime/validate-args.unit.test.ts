/**
 * Tool argument schemas: compiled once per definition, each checked against its dialect's
 * meta-schema first (one checker per process), so a schema that is not JSON Schema is refused.
 */
import { describe, expect, it } from 'vitest';
import { createSchemaCompiler } from '../../src/runtime/server/validate-args.js';

describe('the schema compiler', () => {
  it('refuses a schema its meta-schema refuses, in every dialect', () => {
    const compile = createSchemaCompiler();
    expect(() => compile({ type: 'object', properties: { a: { type: 'nope' } } })).toThrow(
      /^schema is invalid: .*properties\/a\/type/,
    );
    expect(() =>
      compile({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', required: 'a' }),
    ).toThrow(/^schema is invalid: .*required/);
  });

  it('validates arguments and fills in defaults', () => {
    const validate = createSchemaCompiler()({
      type: 'object',
      properties: { n: { type: 'number', default: 2 } },
      required: [],
    });
    expect(validate({})).toEqual({ ok: true, value: { n: 2 } });
    expect(validate({ n: 'x' })).toEqual({ ok: false, problems: ['n must be number'] });
  });
});
