/**
 * The rounds of a request that asks its client for input (protocol revision 2026-07-28): the
 * handler runs again each round, and each question it asks (elicitation, sampling, roots) is
 * matched by its place in the order of asking, and by a digest of what it asks, to an answer the
 * client gave in an earlier round (carried in the signed request state) or in this one (its
 * `inputResponses`). A question without an answer is asked; a question that changed is asked
 * again, and so is every one after it. Pure: no IO.
 */
import { createHash } from 'node:crypto';
import { inputResponse, type InputRequest } from '@modelcontextprotocol/server';

export type InputMethod = InputRequest['method'];

/** One question of a handler: what it asks, and the key it wants it under (else one by its place). */
export interface InputQuestion {
  method: InputMethod;
  params: Record<string, unknown>;
  key?: string;
}

/** An answer carried from round to round: its question's place, the question's digest, the answer. */
export interface RecordedAnswer {
  i: number;
  d: string;
  r: unknown;
}

/** What the request state carries: the request it belongs to (a digest) and the answers so far. */
export interface RoundPayload {
  t: string;
  a: RecordedAnswer[];
}

const SHORT_NAME: Record<InputMethod, string> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};

/** JSON with its object keys in order, so equal values have equal text. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** A short digest of a JSON value (128 bits of SHA-256, base64url). */
export function digestOf(value: unknown): string {
  return createHash('sha256').update(canonical(value)).digest('base64url').slice(0, 22);
}

/** Whether `value` is an answer of the kind `method` asks for (an elicitation's answer to a form has its content). */
export function answers(method: InputMethod, params: Record<string, unknown>, value: unknown): boolean {
  const view = inputResponse({ answer: value }, 'answer');
  switch (method) {
    case 'elicitation/create':
      if (view.kind !== 'elicit') return false;
      if (view.action !== 'accept' || params.mode === 'url') return true;
      return view.content !== null && typeof view.content === 'object' && !Array.isArray(view.content);
    case 'sampling/createMessage':
      return view.kind === 'sampling';
    case 'roots/list':
      return view.kind === 'roots' && view.roots.every((root) => typeof root?.uri === 'string');
  }
}

export type Reply = { answer: unknown } | { ask: { key: string; request: InputRequest } };

/** One round of one request: answers the handler's questions in the order it asks them. */
export class InputRound {
  private next = 0;
  private diverged = false;
  private readonly keys = new Set<string>();
  /** the answers known after this round, for the next round's state */
  readonly known: RecordedAnswer[] = [];

  constructor(
    private readonly recorded: readonly RecordedAnswer[],
    private readonly responses: Readonly<Record<string, unknown>> | undefined,
  ) {}

  /** The answer to the handler's next question, or the key and request to ask it with. */
  reply(question: InputQuestion): Reply {
    const i = this.next++;
    const key = this.keyFor(question, i);
    const request = { method: question.method, params: question.params } as InputRequest;
    const d = digestOf({ key, request });
    const earlier = this.diverged ? undefined : this.recorded.find((answer) => answer.i === i);
    if (earlier !== undefined && earlier.d === d) {
      this.known.push(earlier);
      return { answer: earlier.r };
    }
    // a question that changed since it was answered: every answer after it may depend on it
    if (earlier !== undefined) this.diverged = true;
    const given = this.responses?.[key];
    if (given !== undefined && answers(question.method, question.params, given)) {
      this.known.push({ i, d, r: given });
      return { answer: given };
    }
    return { ask: { key, request } };
  }

  /** The key a question is asked under: the handler's, else one by its kind and place; never the same twice. */
  private keyFor(question: InputQuestion, i: number): string {
    let key = question.key ?? `${SHORT_NAME[question.method]}-${i + 1}`;
    if (this.keys.has(key)) key = `${key}-${i + 1}`;
    this.keys.add(key);
    return key;
  }
}

/** The recorded answers of a verified state payload, when it belongs to `target`; undefined when it does not. */
export function answersOf(payload: unknown, target: string): RecordedAnswer[] | undefined {
  if (payload === null || typeof payload !== 'object') return undefined;
  const { t, a } = payload as Partial<RoundPayload>;
  if (t !== target || !Array.isArray(a)) return undefined;
  const valid = a.every(
    (answer) =>
      answer !== null &&
      typeof answer === 'object' &&
      Number.isInteger(answer.i) &&
      typeof answer.d === 'string' &&
      'r' in answer,
  );
  return valid ? a : undefined;
}
