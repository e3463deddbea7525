/**
 * Units as people write them and as schemas list them: "miles" for `mi`, "fahrenheit" for `f`
 * (and `celsius` for "c"), and which of two unit parameters is the one converted from. Pure.
 */
import { splitWords } from './text.js';

/** Each unit's symbol and the names people write it with; a schema may list any one of them. */
const UNITS: readonly string[] = [
  'm metre meter metres meters',
  'km kilometre kilometer kilometres kilometers kms',
  'cm centimetre centimeter centimetres centimeters',
  'mm millimetre millimeter millimetres millimeters',
  'mi mile miles',
  'ft foot feet',
  'in inch inches',
  'yd yard yards',
  'nmi nautical-mile nautical-miles',
  'kg kilogram kilograms kilo kilos',
  'g gram grams',
  'mg milligram milligrams',
  't tonne tonnes ton tons',
  'lb lbs pound pounds',
  'oz ounce ounces',
  'st stone stones',
  'c celsius centigrade °c',
  'f fahrenheit °f',
  'k kelvin',
  'l litre liter litres liters',
  'ml millilitre milliliter millilitres milliliters',
  'gal gallon gallons',
  'kmh km/h kph kilometres-per-hour kilometers-per-hour',
  'mph miles-per-hour',
  'ms m/s metres-per-second meters-per-second',
  'kn knot knots',
];

const NAMES: ReadonlyMap<string, readonly string[]> = new Map(
  UNITS.flatMap((line) => {
    const names = line.split(' ').map((name) => name.replaceAll('-', ' '));
    return names.map((name) => [name, names] as const);
  }),
);

/** The ways a message may write an enum value: the value itself, and for a unit its other names. */
export function namesOfValue(value: string): readonly string[] {
  const names = NAMES.get(value.toLowerCase());
  if (names === undefined) return [value];
  // a one-letter symbol (c, f, m) is read only where the schema lists it: elsewhere it is just a letter
  return [value, ...names.filter((name) => name !== value.toLowerCase() && name.length > 1)];
}

const SOURCE_WORDS = new Set(['from', 'source', 'input', 'original', 'origin', 'current']);
const TARGET_WORDS = new Set(['to', 'into', 'target', 'output', 'wanted', 'desired', 'destination', 'result']);

/**
 * Whether a parameter is the unit converted from or to: by its name (`from`, `to_unit`,
 * `source`), else by the last such word of its description ("the unit to convert from").
 */
export function roleOf(name: string, description: unknown): 'source' | 'target' | undefined {
  const named = splitWords(name);
  if (named.some((w) => SOURCE_WORDS.has(w))) return 'source';
  if (named.some((w) => TARGET_WORDS.has(w))) return 'target';
  if (typeof description !== 'string') return undefined;
  const words = splitWords(description).filter((w) => SOURCE_WORDS.has(w) || TARGET_WORDS.has(w));
  const last = words.at(-1);
  return last === undefined ? undefined : SOURCE_WORDS.has(last) ? 'source' : 'target';
}

/** The role a word right before a unit gives it: "from miles", "to km", "in celsius", "into feet". */
export function roleOfCue(word: string): 'source' | 'target' | undefined {
  const lower = word.toLowerCase();
  if (lower === 'from') return 'source';
  if (lower === 'to' || lower === 'into' || lower === 'in') return 'target';
  return undefined;
}
