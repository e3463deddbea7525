/**
 * Arithmetic asked in words, rewritten as an expression: "2 plus 3" is `2 + 3`, "ten minus two"
 * `10 - 2`, "the square root of 16" `sqrt(16)`, "add 2, 3 and 4" `2 + 3 + 4`, "15 percent of 80"
 * `15 / 100 * 80`. Only phrases whose operands are numbers are rewritten; numbers in words
 * elsewhere ("the next three days") and quoted text are left as they are. Pure.
 */
import { findWordNumbers } from './number-words.js';

// Number words and quoted text are swapped for markers while the phrases are rewritten.
const WORD_MARK = /\uE000(\d+)\uE001/g;
const QUOTE_MARK = /\uE002(\d+)\uE003/g;
const NUMBER = String.raw`(?:(?<![\w.-])-?\d+(?:\.\d+)?(?![\w.]|-\d)|\uE000\d+\uE001)`;
const OPERAND = String.raw`(?:${NUMBER}|\bpi\b|[a-z][a-z0-9]*\([^()]*\)|\([^()]*\))`;
const THE = String.raw`(?:the\s+)?`;
const MAX_ROUNDS = 20;

interface Rule {
  pattern: RegExp;
  write: (operands: string[]) => string;
}

function rule(source: string, write: (operands: string[]) => string): Rule {
  return { pattern: new RegExp(source.replaceAll('OP', `(${OPERAND})`), 'gi'), write };
}

const RULES: readonly Rule[] = [
  rule(String.raw`\b${THE}(?:square\s+root|sqrt|root)\s+of\s+${THE}OP`, ([a]) => `sqrt(${a})`),
  rule(String.raw`\b${THE}absolute\s+value\s+of\s+${THE}OP`, ([a]) => `abs(${a})`),
  rule(String.raw`OP\s+squared\b`, ([a]) => `${a} ^ 2`),
  rule(String.raw`OP\s+cubed\b`, ([a]) => `${a} ^ 3`),
  rule(String.raw`OP\s*(?:percent|per\s+cent|%)\s+of\s+${THE}OP`, ([a, b]) => `${a} / 100 * ${b}`),
  rule(String.raw`\bsubtract\s+OP\s+from\s+OP`, ([a, b]) => `${b} - ${a}`),
  rule(String.raw`\bmultiply\s+OP\s+(?:by|and|with)\s+OP`, ([a, b]) => `${a} * ${b}`),
  rule(String.raw`\bdivide\s+OP\s+by\s+OP`, ([a, b]) => `${a} / ${b}`),
  rule(String.raw`\b${THE}product\s+of\s+OP\s+and\s+OP`, ([a, b]) => `${a} * ${b}`),
  rule(String.raw`\b${THE}quotient\s+of\s+OP\s+and\s+OP`, ([a, b]) => `${a} / ${b}`),
  rule(String.raw`\b${THE}difference\s+between\s+OP\s+and\s+OP`, ([a, b]) => `${a} - ${b}`),
  rule(String.raw`OP\s+(?:raised\s+)?to\s+the\s+power\s+of\s+${THE}OP`, ([a, b]) => `${a} ^ ${b}`),
  rule(String.raw`OP\s+plus\s+${THE}OP`, ([a, b]) => `${a} + ${b}`),
  rule(String.raw`OP\s+minus\s+${THE}OP`, ([a, b]) => `${a} - ${b}`),
  rule(String.raw`OP\s+(?:times|multiplied\s+by|x)\s+${THE}OP`, ([a, b]) => `${a} * ${b}`),
  rule(String.raw`OP\s+(?:divided\s+by|over)\s+${THE}OP`, ([a, b]) => `${a} / ${b}`),
  rule(String.raw`OP\s+(?:mod|modulo)\s+${THE}OP`, ([a, b]) => `${a} % ${b}`),
];

/** "add 2 and 3", "add 2, 3 and 4", "add 2 to 3": two or more operands, summed. */
const ADD = new RegExp(String.raw`\badd\s+(${OPERAND}(?:\s*,\s*${OPERAND})*\s*(?:,\s*)?(?:and|to)\s+${OPERAND})`, 'gi');

/** A message with the arithmetic it asks in words written as an expression. */
export function rewriteArithmetic(message: string): string {
  const quotes: string[] = [];
  let text = message.replace(/"[^"]*"|“[^”]*”|‘[^’]*’/g, (quote) => `\uE002${quotes.push(quote) - 1}\uE003`);
  const numbers = findWordNumbers(text);
  const words: string[] = [];
  for (const number of [...numbers].reverse()) {
    words.unshift(text.slice(number.start, number.end));
    text = `${text.slice(0, number.start)}\uE000${numbers.length - words.length}\uE001${text.slice(number.end)}`;
  }
  const digits = (operand: string) =>
    operand.replace(WORD_MARK, (_, index: string) => String(numbers[Number(index)]!.value));
  for (let round = 0; round < MAX_ROUNDS; round += 1) {
    const before = text;
    for (const { pattern, write } of RULES)
      text = text.replace(pattern, (...match: unknown[]) =>
        write(
          match
            .slice(1, -2)
            .filter((m): m is string => typeof m === 'string')
            .map(digits),
        ),
      );
    text = text.replace(ADD, (_, list: string) =>
      list
        .split(/\s*,?\s*(?:\band\b|\bto\b|,)\s*/i)
        .map((operand) => digits(operand.trim()))
        .join(' + '),
    );
    if (text === before) break;
  }
  return text
    .replace(WORD_MARK, (_, index: string) => words[Number(index)]!)
    .replace(QUOTE_MARK, (_, index: string) => quotes[Number(index)]!);
}
