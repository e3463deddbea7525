/**
 * The local planner's English: a stemmer that also brings derived forms to their base word
 * ("evaluation" meets "evaluate", "currently" meets "current"), and a small thesaurus of the
 * words people ask with for the words servers describe themselves with ("average" for "mean",
 * "rain" for "precipitation", "tomorrow" for "forecast"). Pure.
 */
import { stem as lightStem, wordStems as lightWordStems } from '../../../definition/tokenize.js';

/** Derived endings and what they stand for, longest first; each leaves at least three letters. */
const DERIVED: ReadonlyArray<readonly [string, string]> = [
  ['ations', 'ate'],
  ['ation', 'ate'],
  ['itions', ''],
  ['ition', ''],
  ['nesses', ''],
  ['ness', ''],
  ['ments', ''],
  ['ment', ''],
  ['ions', ''],
  ['ion', ''],
];
const MIN_BASE = 3;

/**
 * A word's stem: derived endings first (-ation, -ition, -ion, -ment, -ness, and -ly after four
 * letters), then the shared light stemmer (plurals, -ing, -ed, a final e).
 */
export function stem(word: string): string {
  let w = word.toLowerCase();
  for (const [suffix, replacement] of DERIVED) {
    if (w.endsWith(suffix) && w.length - suffix.length >= MIN_BASE) {
      w = w.slice(0, -suffix.length) + replacement;
      break;
    }
  }
  if (w.length > 6 && w.endsWith('ly')) w = w.slice(0, -2);
  return lightStem(w);
}

/** The distinct stems of a text's words that are not stop words or generic verbs, by this stemmer. */
export function wordStems(text: string): string[] {
  return lightWordStems(text, stem);
}

/**
 * Words that stand for one another when a person asks. A word may be in several groups. Kept
 * small and general: each group is a meaning many servers have, not the words of one server.
 */
const GROUPS: readonly string[] = [
  // arithmetic and statistics
  'add addition plus sum total',
  'subtract subtraction minus difference',
  'multiply multiplication product',
  'divide division quotient',
  'average mean avg',
  'median middle',
  'minimum min smallest lowest',
  'maximum max largest biggest highest',
  'sqrt root',
  'power exponent pow',
  'calculate compute evaluate arithmetic math maths solve',
  'convert conversion converter',
  // weather
  'weather conditions sunny cloudy stormy foggy rain snow',
  'precipitation rain rainy raining shower showers drizzle snow snowfall umbrella wet',
  'temperature hot cold warm chilly degrees',
  'wind windy breeze gust',
  'humidity humid muggy',
  // times: what is to come, and what is now
  'forecast tomorrow weekend upcoming future later predict prediction outlook next daily ' +
    'monday tuesday wednesday thursday friday saturday sunday',
  'current now currently present moment live',
  // places and look-ups
  'location place city town village address coordinates geocode',
  'search lookup query seek',
  // everyday verbs and things
  'delete remove erase',
  'create new',
  'update edit modify',
  'greet hello hi welcome greeting',
  'note memo jot',
];

const SYNONYMS: ReadonlyMap<string, readonly string[]> = buildSynonyms();

function buildSynonyms(): Map<string, string[]> {
  const synonyms = new Map<string, Set<string>>();
  for (const group of GROUPS) {
    const stems = [...new Set(group.split(/\s+/).map(stem))];
    for (const one of stems) {
      const set = synonyms.get(one) ?? new Set<string>();
      for (const other of stems) if (other !== one) set.add(other);
      synonyms.set(one, set);
    }
  }
  return new Map([...synonyms].map(([key, set]) => [key, [...set]]));
}

/** The stems that stand for a stem, itself not included. */
export function synonymsOf(stemmed: string): readonly string[] {
  return SYNONYMS.get(stemmed) ?? [];
}
