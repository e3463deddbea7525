import { describe, expect, it } from 'vitest';
import {
  answers,
  answersOf,
  digestOf,
  InputRound,
  type InputQuestion,
  type RecordedAnswer,
} from '../../src/runtime/server/input-rounds.js';

const form = { type: 'object', properties: { name: { type: 'string' } } };
const askName: InputQuestion = {
  method: 'elicitation/create',
  params: { mode: 'form', message: 'Name?', requestedSchema: form },
  key: 'name',
};
const askModel: InputQuestion = { method: 'sampling/createMessage', params: { messages: [], maxTokens: 10 } };
const askRoots: InputQuestion = { method: 'roots/list', params: {} };
const accepted = { action: 'accept', content: { name: 'Ada' } };
const sampled = { role: 'assistant', model: 'm', content: { type: 'text', text: 'hi' } };

/** What a first round records for `questions` answered with `given` (by key). */
function recordedFor(questions: InputQuestion[], given: Record<string, unknown>): RecordedAnswer[] {
  const round = new InputRound([], given);
  for (const question of questions) round.reply(question);
  return round.known;
}

describe('an input round', () => {
  it('asks a question nobody answered, under its key or one by its kind and place', () => {
    const round = new InputRound([], undefined);
    expect(round.reply(askName)).toEqual({
      ask: { key: 'name', request: { method: askName.method, params: askName.params } },
    });
    expect(round.reply(askModel)).toMatchObject({ ask: { key: 'sampling-2' } });
    expect(round.reply(askRoots)).toMatchObject({ ask: { key: 'roots-3' } });
    expect(round.known).toEqual([]);
  });

  it('never asks two questions under one key', () => {
    const round = new InputRound([], undefined);
    expect(round.reply(askName)).toMatchObject({ ask: { key: 'name' } });
    expect(round.reply(askName)).toMatchObject({ ask: { key: 'name-2' } });
  });

  it("answers from this round's responses, and records the answer for the next round", () => {
    const round = new InputRound([], { name: accepted });
    expect(round.reply(askName)).toEqual({ answer: accepted });
    expect(round.known).toEqual([{ i: 0, d: expect.any(String), r: accepted }]);
  });

  it('answers from the recorded answers of earlier rounds, by place and digest', () => {
    const recorded = recordedFor([askName], { name: accepted });
    const round = new InputRound(recorded, undefined);
    expect(round.reply(askName)).toEqual({ answer: accepted });
    expect(round.reply(askModel)).toMatchObject({ ask: { key: 'sampling-2' } });
    expect(round.known).toEqual(recorded);
  });

  it('asks again a question that changed, and every one after it', () => {
    const recorded = recordedFor([askName, askModel], { name: accepted, 'sampling-2': sampled });
    const changed = { ...askName, params: { ...askName.params, message: 'Your full name?' } };
    const round = new InputRound(recorded, undefined);
    expect(round.reply(changed)).toMatchObject({ ask: { key: 'name' } });
    expect(round.reply(askModel)).toMatchObject({ ask: { key: 'sampling-2' } });
    expect(round.known).toEqual([]);
  });

  it.each([
    ['a number', 12345],
    ['null', null],
    ['a sampling result', sampled],
    ['an acceptance without content', { action: 'accept' }],
    ['an unknown action', { action: 'maybe', content: {} }],
  ])('does not take %s as the answer to an elicitation', (_, value) => {
    const round = new InputRound([], { name: value });
    expect(round.reply(askName)).toMatchObject({ ask: { key: 'name' } });
  });

  it('ignores responses it did not ask for', () => {
    const round = new InputRound([], { name: accepted, extra: { action: 'accept', content: { x: 1 } } });
    expect(round.reply(askName)).toEqual({ answer: accepted });
    expect(round.known).toHaveLength(1);
  });
});

describe('answers', () => {
  it.each([
    ['elicitation/create', { mode: 'form' }, { action: 'decline' }, true],
    ['elicitation/create', { mode: 'url' }, { action: 'accept' }, true],
    ['sampling/createMessage', {}, sampled, true],
    ['sampling/createMessage', {}, accepted, false],
    ['roots/list', {}, { roots: [{ uri: 'file:///a' }] }, true],
    ['roots/list', {}, { roots: [{ name: 'no uri' }] }, false],
    ['roots/list', {}, { roots: 'all' }, false],
  ] as const)('%s %j: %j is an answer: %s', (method, params, value, expected) => {
    expect(answers(method, params, value)).toBe(expected);
  });
});

describe('the state payload', () => {
  const target = digestOf({ method: 'tools/call', name: 'greet', args: {} });

  it('gives its answers for the request it belongs to', () => {
    const a = recordedFor([askName], { name: accepted });
    expect(answersOf({ t: target, a }, target)).toEqual(a);
  });

  it.each([
    ['another request', { t: digestOf({ method: 'tools/call', name: 'other', args: {} }), a: [] }],
    ['no answers', { t: target }],
    ['a malformed answer', { t: target, a: [{ i: 'x', d: 'y', r: 1 }] }],
    ['not an object', 'state'],
  ])('gives nothing for %s', (_, payload) => {
    expect(answersOf(payload, target)).toBeUndefined();
  });

  it('digests equal values alike, whatever the order of their keys', () => {
    expect(digestOf({ a: 1, b: [1, { c: 2, d: 3 }] })).toBe(digestOf({ b: [1, { d: 3, c: 2 }], a: 1 }));
    expect(digestOf({ a: 1 })).not.toBe(digestOf({ a: 2 }));
  });
});
