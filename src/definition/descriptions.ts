/**
 * How alike two tool descriptions are, and how long a description must be to choose a tool by.
 * One measure serves `validate` (it warns about near-identical descriptions) and the test
 * guidance (`similar_descriptions`), so a pair that `validate` flags is a pair the guidance names.
 *
 * The measure: the Jaccard index of the two descriptions' word stems — the distinct words that
 * are not stop words or generic verbs ("returns", "tool", "value" …), lightly stemmed, so
 * "forecasts" meets "forecast" — that is, shared stems / stems in either. Pure.
 */
import { splitWords, stem, wordStems } from './tokenize.js';

/** From this similarity on, two descriptions are near-identical: `validate` warns, and the guidance flags a tool used from such a pair. */
export const NEAR_IDENTICAL = 0.6;
/**
 * From this similarity on, a tool the agent used instead of the one a case expects counts as
 * chosen for its description: the guidance names the pair. Lower than NEAR_IDENTICAL because the
 * wrong choice is already known.
 */
export const CLOSE = 0.3;
/** A description with fewer content words than this is too short to choose a tool by. */
export const MIN_DESCRIPTION_WORDS = 3;

export interface DescriptionSimilarity {
  /** 0 (no word in common) to 1 (the same words) */
  score: number;
  /** the words they share, as the first description writes them */
  shared: string[];
}

/** The stems a description is compared by. */
export function descriptionStems(text: string): Set<string> {
  return new Set(wordStems(text));
}

/** The similarity of two descriptions' stems (descriptionStems), without the words: for comparing many pairs. */
export function stemSimilarity(left: ReadonlySet<string>, right: ReadonlySet<string>): number {
  let common = 0;
  for (const s of left) if (right.has(s)) common += 1;
  const union = left.size + right.size - common;
  return union === 0 ? 0 : Math.round((common / union) * 100) / 100;
}

export function compareDescriptions(a: string, b: string): DescriptionSimilarity {
  return compareStems(a, descriptionStems(a), descriptionStems(b));
}

/** compareDescriptions with the stems of both already read (descriptionStems): the first description's text names the shared words. */
export function compareStems(a: string, left: ReadonlySet<string>, right: ReadonlySet<string>): DescriptionSimilarity {
  const common = new Set([...left].filter((s) => right.has(s)));
  const shared: string[] = [];
  const seen = new Set<string>();
  for (const word of splitWords(a)) {
    const s = stem(word);
    if (common.has(s) && !seen.has(s)) {
      seen.add(s);
      shared.push(word);
    }
  }
  return { score: stemSimilarity(left, right), shared };
}

/** How many content words a description has (what `MIN_DESCRIPTION_WORDS` counts). */
export function descriptionWords(text: string | undefined): number {
  return text === undefined ? 0 : wordStems(text).length;
}

/** `"a", "b" and "c"` for messages. */
export function quoteWords(words: readonly string[]): string {
  const quoted = words.map((w) => `"${w}"`);
  return quoted.length <= 1 ? quoted.join('') : `${quoted.slice(0, -1).join(', ')} and ${quoted.at(-1)!}`;
}
