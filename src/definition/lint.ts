/**
 * Lint: what makes an agent choose tools badly, found without running anything. Two tools whose
 * descriptions are near-identical (the measure the test guidance uses for
 * `similar_descriptions`, src/api/descriptions.ts), a description too short to choose a tool
 * by, and a required parameter with no description. Warnings only: `validate` shows them. Pure.
 */
import {
  compareStems,
  descriptionStems,
  MIN_DESCRIPTION_WORDS,
  NEAR_IDENTICAL,
  quoteWords,
  stemSimilarity,
} from './descriptions.js';
import { wordStems } from './tokenize.js';
import type { DefinitionIssue } from './errors.js';
import type { ServerDefinition } from './schema.js';

/** What each lint warning is about, for machines (`validate --json`). */
export type LintRule = 'similar_descriptions' | 'short_description' | 'undescribed_parameter';

export interface LintIssue extends DefinitionIssue {
  rule: LintRule;
}

export function lintDefinition(definition: ServerDefinition): LintIssue[] {
  const tools = definition.tools ?? [];
  const issues: LintIssue[] = [];
  const warn = (rule: LintRule, path: Array<string | number>, message: string) =>
    issues.push({ rule, path, message, severity: 'warning' });

  // Each description is read into stems once: the pairs below compare them, tools² times.
  const stems = tools.map((tool) => descriptionStems(tool.description));
  tools.forEach((tool, i) => {
    const words = stems[i]!.size;
    if (words < MIN_DESCRIPTION_WORDS) {
      warn(
        'short_description',
        ['tools', i, 'description'],
        `too short to choose ${tool.name} by (${words} ${words === 1 ? 'word' : 'words'} that say something; at least ${MIN_DESCRIPTION_WORDS}): ` +
          'say what it does, with what, and what it returns, in the words people ask with',
      );
    }
    const properties = (tool.inputSchema.properties ?? {}) as Record<string, { description?: unknown } | undefined>;
    for (const name of tool.inputSchema.required ?? []) {
      const description = properties[name]?.description;
      if (properties[name] !== undefined && (typeof description !== 'string' || description.trim() === '')) {
        warn(
          'undescribed_parameter',
          ['tools', i, 'inputSchema', 'properties', name],
          `the required parameter "${name}" has no description: say what value it wants and in which form, so an agent can fill it`,
        );
      }
    }
  });

  // Each tool is warned about once, at its description, naming the earlier tool it is most like.
  const wordStemsOf = memoized(wordStems);
  for (let j = 1; j < tools.length; j += 1) {
    let best = -1;
    let bestScore = 0;
    let others = 0;
    for (let i = 0; i < j; i += 1) {
      const score = stemSimilarity(stems[i]!, stems[j]!);
      if (score < NEAR_IDENTICAL) continue;
      others += 1;
      if (score > bestScore) [best, bestScore] = [i, score];
    }
    if (best === -1) continue;
    const [a, b] = [tools[best]!, tools[j]!];
    const similarity = compareStems(a.description, stems[best]!, stems[j]!);
    const more = others > 1 ? ` (and ${others - 1} more earlier ${others === 2 ? 'tool' : 'tools'})` : '';
    warn(
      'similar_descriptions',
      ['tools', j, 'description'],
      `near-identical to the description of ${a.name} (tools[${best}])${more}: they share ${quoteWords(similarity.shared)} ` +
        `(similarity ${similarity.score}; warned from ${NEAR_IDENTICAL}), so an agent may pick either for the same request: ` +
        suggestDifference(a, b, stems[best]!, stems[j]!, wordStemsOf),
    );
  }
  return issues;
}

/** What to do about a near-identical pair: lead each description with what only it has. */
function suggestDifference(
  a: { name: string; description: string },
  b: { name: string; description: string },
  left: ReadonlySet<string>,
  right: ReadonlySet<string>,
  wordStemsOf: (word: string) => string[],
): string {
  const only = (text: string, other: ReadonlySet<string>) =>
    text.split(/\s+/).filter((word) => {
      const stems = wordStemsOf(word);
      return stems.length > 0 && stems.every((s) => !other.has(s));
    });
  const onlyA = only(a.description, right)
    .map(clean)
    .filter((w) => w !== '');
  const onlyB = only(b.description, left)
    .map(clean)
    .filter((w) => w !== '');
  if (onlyA.length === 0 || onlyB.length === 0)
    return `say what sets ${a.name} and ${b.name} apart, or merge them into one tool`;
  return `lead each with what sets it apart (${a.name}: ${quoteWords(onlyA.slice(0, 3))}; ${b.name}: ${quoteWords(onlyB.slice(0, 3))}) and say when to use which`;
}

/** `fn` with its answers kept: the words of many descriptions repeat. */
function memoized<T>(fn: (text: string) => T): (text: string) => T {
  const answers = new Map<string, T>();
  return (text) => {
    let answer = answers.get(text);
    if (answer === undefined) answers.set(text, (answer = fn(text)));
    return answer;
  };
}

function clean(word: string): string {
  return word.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '').toLowerCase();
}
