import { Ajv } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { isPlainSchema } from '../../src/definition/plain-schema.js';

const options = { strict: false, validateFormats: false };
const checkers = [new Ajv(options), new Ajv2019(options), new Ajv2020(options)];

describe('isPlainSchema', () => {
  it.each([
    { type: 'object', properties: { text: { type: 'string', description: 'the text' } }, required: ['text'] },
    { type: ['string', 'null'], enum: ['a', null], default: 'a' },
    { type: 'array', items: { type: 'integer', minimum: 1, maximum: 9 }, minItems: 1, uniqueItems: true },
    {
      anyOf: [
        { type: 'string', pattern: '^a' },
        { type: 'number', multipleOf: 0.5 },
      ],
      not: false,
    },
    { type: 'object', additionalProperties: { type: 'boolean' }, minProperties: 0, examples: [{}] },
    {},
  ])('says yes only to schemas every dialect accepts: %j', (schema) => {
    expect(isPlainSchema(schema)).toBe(true);
    for (const ajv of checkers) expect(ajv.validateSchema(schema)).toBe(true);
  });

  it.each([
    ['an unknown type', { type: 'text' }],
    ['a repeated type', { type: ['string', 'string'] }],
    ['a string for required', { required: 'text' }],
    ['a negative length', { maxLength: -1 }],
    ['a zero multipleOf', { multipleOf: 0 }],
    ['an empty anyOf', { anyOf: [] }],
    ['a $ref', { $ref: '#/$defs/a', $defs: { a: { type: 'string' } } }],
    ['items as a list', { items: [{ type: 'string' }] }],
    ['an unknown keyword', { 'x-widget': 'slider' }],
    ['a nested problem', { properties: { a: { type: 'strin' } } }],
    ['not a map', ['type']],
  ])('leaves %s to ajv', (_, schema) => {
    expect(isPlainSchema(schema)).toBe(false);
  });
});
