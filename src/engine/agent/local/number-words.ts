/**
 * Numbers written in words: "two", "twenty-five", "a hundred and five", "three thousand". Pure.
 */

const UNITS: Record<string, number> = {
  zero: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
};
const TENS: Record<string, number> = {
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
};
const SCALES: Record<string, number> = { hundred: 100, thousand: 1000, million: 1_000_000 };

export interface WordNumber {
  value: number;
  start: number;
  end: number;
}

/**
 * The numbers a text writes in words, each the longest phrase that reads as one number: "twenty
 * five" is 25, "a hundred and five" 105, but "two three" is two numbers and "ten and two" too.
 */
export function findWordNumbers(text: string): WordNumber[] {
  const words = [...text.matchAll(/[A-Za-z]+/g)];
  const found: WordNumber[] = [];
  let index = 0;
  while (index < words.length) {
    const read = readNumber(text, words, index);
    if (read === undefined) {
      index += 1;
      continue;
    }
    found.push(read.number);
    index = read.next;
  }
  return found;
}

function readNumber(
  text: string,
  words: RegExpExecArray[],
  from: number,
): { number: WordNumber; next: number } | undefined {
  let total = 0;
  let current = 0;
  let last: 'unit' | 'teen' | 'tens' | 'scale' | undefined;
  let index = from;
  let end = -1;
  // "a hundred", "a thousand"
  if (words[from]![0].toLowerCase() === 'a' && SCALES[words[from + 1]?.[0].toLowerCase() ?? ''] !== undefined) {
    current = 1;
    index += 1;
  }
  for (; index < words.length; index += 1) {
    const match = words[index]!;
    if (
      index > from &&
      !/^[\s-]*$/.test(text.slice(words[index - 1]!.index + words[index - 1]![0].length, match.index))
    )
      break;
    let word = match[0].toLowerCase();
    // "a hundred and five": `and` only joins a scale to what follows it
    if (word === 'and' && last === 'scale') {
      const next = words[index + 1]?.[0].toLowerCase() ?? '';
      if (UNITS[next] === undefined && TENS[next] === undefined) break;
      index += 1;
      word = next;
    }
    const unit = UNITS[word];
    const tens = TENS[word];
    const scale = SCALES[word];
    if (unit !== undefined) {
      if (last === 'unit' || last === 'teen' || (last === 'tens' && unit >= 10)) break;
      current += unit;
      last = unit >= 10 ? 'teen' : 'unit';
    } else if (tens !== undefined) {
      if (last === 'unit' || last === 'teen' || last === 'tens') break;
      current += tens;
      last = 'tens';
    } else if (scale !== undefined) {
      if (last === undefined && current === 0) break;
      if (scale === 100) current = (current === 0 ? 1 : current) * 100;
      else {
        total += (current === 0 ? 1 : current) * scale;
        current = 0;
      }
      last = 'scale';
    } else break;
    end = words[index]!.index + words[index]![0].length;
  }
  if (end === -1) return undefined;
  if (words[from]![0].toLowerCase() === 'a' && last === undefined) return undefined;
  return { number: { value: total + current, start: words[from]!.index, end }, next: index };
}
