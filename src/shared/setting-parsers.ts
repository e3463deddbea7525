/**
 * How a setting's text (an environment variable, a flag) or JSON value (engine-settings.json) becomes
 * its value. Each parser says what it allows in words, so a wrong value is refused with one message
 * that names the setting, the value and what would do. Pure.
 */

/** Turns a raw value into the setting's value; undefined when the value is not allowed. */
export interface SettingParser<T> {
  /** what the setting takes, as it ends "… must be ___, not "x"" */
  allowed: string;
  parse(raw: unknown): T | undefined;
}

/** A raw number: a JSON number, or text that reads as one (surrounding spaces allowed). */
function numberOf(raw: unknown): number | undefined {
  if (typeof raw === 'number') return raw;
  if (typeof raw !== 'string' || raw.trim() === '') return undefined;
  const value = Number(raw.trim());
  return Number.isNaN(value) ? undefined : value;
}

/** Any non-empty text (a JSON number is taken as its text). */
export const text: SettingParser<string> = {
  allowed: 'a string',
  parse: (raw) => (typeof raw === 'string' ? raw : typeof raw === 'number' ? String(raw) : undefined),
};

/** A whole number within bounds. */
export function wholeNumber(min: number, max = Number.MAX_SAFE_INTEGER, allowed?: string): SettingParser<number> {
  const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`;
  return {
    allowed: allowed ?? `a whole number ${range}`,
    parse: (raw) => {
      const value = numberOf(raw);
      return value !== undefined && Number.isInteger(value) && value >= min && value <= max ? value : undefined;
    },
  };
}

/** A finite number above `min` (or at least it, when `inclusive`). */
export function number(min: number, options: { inclusive: boolean; allowed: string }): SettingParser<number> {
  return {
    allowed: options.allowed,
    parse: (raw) => {
      const value = numberOf(raw);
      if (value === undefined || !Number.isFinite(value)) return undefined;
      return value > min || (options.inclusive && value === min) ? value : undefined;
    },
  };
}

/** A positive number. */
export const positive: SettingParser<number> = number(0, { inclusive: false, allowed: 'a positive number' });

/** A port number; 0 for any free one. */
export const port: SettingParser<number> = wholeNumber(0, 65_535, 'a port number from 0 to 65535');

/** One of a few words (`ignoreCase`: in any case, and around spaces). */
export function oneOf<const T extends string>(
  choices: readonly T[],
  options: { ignoreCase?: boolean; allowed?: string } = {},
): SettingParser<T> {
  return {
    allowed: options.allowed ?? `one of ${choices.join(', ')}`,
    parse: (raw) => {
      if (typeof raw !== 'string') return undefined;
      const word = options.ignoreCase === true ? raw.trim().toLowerCase() : raw;
      return (choices as readonly string[]).includes(word) ? (word as T) : undefined;
    },
  };
}

/** `1` turns it on; anything else leaves it off (a debugging switch never stops the program). */
export const flagOne: SettingParser<boolean> = { allowed: '1', parse: (raw) => raw === '1' || raw === true };

/** Names separated by `separator` (or, for a regular expression, any of its matches); empty entries are left out. */
export function list(separator: string | RegExp, allowed: string): SettingParser<string[]> {
  return {
    allowed,
    parse: (raw) => {
      if (Array.isArray(raw)) return raw.every((item) => typeof item === 'string') ? raw : undefined;
      if (typeof raw !== 'string') return undefined;
      return raw
        .split(separator)
        .map((entry) => entry.trim())
        .filter((entry) => entry !== '');
    },
  };
}
