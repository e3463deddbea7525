/**
 * The local agent matches the words of a message against a definition's `pattern` on the
 * linear-time engine: a catastrophic-backtracking pattern and a crafted message are answered at once.
 */
import { describe, expect, it } from 'vitest';
import { fillArguments } from '../../../src/engine/agent/local/arguments.js';

describe('the local agent and definition patterns', () => {
  it('fills an argument by a pattern like ^(a+)+$ from a message with a crafted word, without backtracking', () => {
    const schema = {
      type: 'object' as const,
      properties: { code: { type: 'string', pattern: '^(a+)+$' } },
      required: ['code'],
    };
    // a word of 30,000 a's and a b: the backtracking RegExp would not finish on it
    const crafted = `please check ${'a'.repeat(30_000)}b and aaaa`;
    expect(fillArguments(schema, crafted).args.code === 'aaaa').toBe(true);
  });
});
