/**
 * How tool descriptions and messages are read as words: identifiers split into their parts, a
 * light stemmer, and the stop words and generic verbs that do not tell tools apart. The offline
 * test agent chooses tools with these, and the guidance and `validate` compare descriptions with
 * them, so all three read a description the same way. Pure.
 */

const STOP_WORDS = new Set(
  `a an the this that these those there here it its it's is are was were be been being am do does did done doing
  have has had having i me my mine myself we us our ours you your yours he him his she her they them their
  what which who whom whose when where why how can could would should will shall may might must
  to of in on at for with by from about as into onto over under up down out off than then so too very
  and or but if not no nor yes any some all each every both either neither other another such
  just also only again please thanks thank kindly hey
  tell give show get gets got let lets know want wants need needs like use used using uses
  check read see look find me'd i'm i'd i'll what's let's can't don't
  something anything thing things way much many more most few less least ok okay via per etc`.split(/\s+/),
);

/** Generic verbs that describe any tool, so they do not tell tools apart. */
const WEAK_WORDS = new Set([
  'return',
  'returns',
  'given',
  'call',
  'called',
  'tool',
  'tools',
  'server',
  'value',
  'values',
  'result',
  'results',
]);

export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word.toLowerCase());
}

/** Lower-case words of a text, with identifiers split: `get_current_weather` and `myTasks` give their parts. */
export function splitWords(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9']+/)
    .map((word) => word.replace(/^'+|'+$/g, '').replace(/'s$/, ''))
    .filter((word) => word !== '');
}

/** A light stemmer: enough for plurals and -ing/-ed forms to meet their base word. */
export function stem(word: string): string {
  let w = word.toLowerCase();
  if (w.length > 4 && w.endsWith('ies')) w = `${w.slice(0, -3)}y`;
  else if (w.length > 4 && /(?:ss|x|z|ch|sh)es$/.test(w)) w = w.slice(0, -2);
  else if (w.length > 3 && w.endsWith('s') && !/(?:ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith('ing')) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith('ed')) w = w.slice(0, -2);
  if (w.length > 3 && w.endsWith('e')) w = w.slice(0, -1);
  return w;
}

export function isWeakWord(word: string): boolean {
  return WEAK_WORDS.has(word.toLowerCase());
}

/**
 * The distinct stems of a text's words that are not stop words or generic verbs (one letter words
 * dropped); `stemOf` may strip more than the light stemmer does.
 */
export function wordStems(text: string, stemOf: (word: string) => string = stem): string[] {
  const stems: string[] = [];
  for (const word of splitWords(text)) {
    if (isStopWord(word) || isWeakWord(word) || word.length < 2) continue;
    stems.push(stemOf(word));
  }
  return [...new Set(stems)];
}
