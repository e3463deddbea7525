/**
 * Judging a reply against a case's criteria (`expect.reply`). The offline judge (`mcpctl-local`)
 * is a deterministic check of key words: a criterion is met when each of its content words (not a
 * stop word, not a word about answering, such as "mentions" or "says") occurs in the reply, lightly
 * stemmed; a number must occur as written ("16.09" is not "16.1"). A model judge gets the prompt below and answers with a verdict per
 * criterion, read here. Pure: no IO.
 */
import { jsonInText } from '../shared/json-text.js';
import { isStopWord, splitWords, stem } from '../definition/tokenize.js';

export type ReplyVerdict = {
  criterion: string;
  passed: boolean;
  reason?: string;
};

/** Words a criterion uses to say what the reply should do, not what it should contain. */
const JUDGING_WORDS = new Set(
  `mention mentions mentioned say says said state states include includes including contain contains containing
  reply replies response responds answer answers gives provide provides report reports tell tells show shows list
  lists name names return returns explain explains describe describes correct correctly clear clearly least word
  words value`.split(/\s+/),
);

/** The stems a criterion's key words come to: what the offline judge looks for in the reply. */
export function criterionKeyWords(criterion: string): string[] {
  const { numbers, words } = tokensOf(criterion);
  const keys = words.filter((word) => !isStopWord(word) && !JUDGING_WORDS.has(word) && word.length > 1);
  return [...new Set([...numbers, ...keys.map(stem)])];
}

const NUMBER = /\d+(?:\.\d+)?/g;

/** A text's numbers as written (`16.09` stays whole) and its other words. */
function tokensOf(text: string): { numbers: string[]; words: string[] } {
  return { numbers: text.match(NUMBER) ?? [], words: splitWords(text.replace(NUMBER, ' ')) };
}

/** The offline judge: each criterion met when all its key words occur in the reply. */
export function judgeOffline(reply: string, criteria: readonly string[]): ReplyVerdict[] {
  const { numbers, words } = tokensOf(reply);
  const present = new Set([...numbers, ...words.map(stem)]);
  return criteria.map((criterion) => {
    const keys = criterionKeyWords(criterion);
    if (keys.length === 0)
      return { criterion, passed: false, reason: 'no key word to look for: name what the reply should contain' };
    const missing = keys.filter((key) => !present.has(key));
    return missing.length === 0
      ? { criterion, passed: true, reason: `the reply has ${keys.join(', ')}` }
      : { criterion, passed: false, reason: `the reply lacks ${missing.join(', ')}` };
  });
}

/** The message a model judge answers: the request, the reply, and the criteria numbered. */
export function judgePrompt(input: { message: string; reply: string; criteria: readonly string[] }): string {
  return [
    'You are grading the reply of an AI assistant that could use tools. Do not call any tool.',
    'For each numbered criterion, decide whether the reply meets it. Answer with JSON only, in this form:',
    '{"verdicts": [{"criterion": 1, "passed": true, "reason": "one short sentence"}]}',
    '',
    `The user asked:\n<<<\n${input.message}\n>>>`,
    '',
    `The assistant replied:\n<<<\n${input.reply}\n>>>`,
    '',
    'Criteria:',
    ...input.criteria.map((criterion, i) => `${i + 1}. ${criterion}`),
  ].join('\n');
}

/**
 * The verdicts in a model judge's answer, one per criterion; a criterion it gave no verdict for
 * has failed, saying so. Throws when the answer holds no verdicts at all.
 */
export function readVerdicts(answer: string, criteria: readonly string[]): ReplyVerdict[] {
  const start = answer.indexOf('{');
  const end = answer.lastIndexOf('}');
  const parsed = start === -1 ? undefined : jsonInText(answer.slice(start, end + 1));
  const list = (parsed as { verdicts?: unknown } | undefined)?.verdicts;
  if (!Array.isArray(list)) throw new Error('the judge did not answer with the verdicts asked for');
  const byNumber = new Map<number, { passed: boolean; reason?: string }>();
  for (const item of list as unknown[]) {
    const { criterion, passed, reason } = (item ?? {}) as Record<string, unknown>;
    if (typeof criterion === 'number' && typeof passed === 'boolean')
      byNumber.set(criterion, { passed, ...(typeof reason === 'string' ? { reason: reason.slice(0, 300) } : {}) });
  }
  return criteria.map((criterion, i) => {
    const verdict = byNumber.get(i + 1);
    return verdict === undefined
      ? { criterion, passed: false, reason: 'the judge gave no verdict for it' }
      : { criterion, ...verdict };
  });
}
