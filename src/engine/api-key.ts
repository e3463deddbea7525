/**
 * What makes a usable API key for the engine: it travels as `Authorization: Bearer <key>`, so
 * it is one token of visible ASCII, and long enough not to be guessed. Pure.
 */

export const MIN_API_KEY_LENGTH = 16;

/** Why `key` cannot be the engine's API key, or undefined when it can. */
export function apiKeyProblem(key: string): string | undefined {
  if (key.trim() === '') return 'it is empty or only white space';
  if (/\s/.test(key)) return 'it contains white space, which cannot travel in an Authorization header';
  if (/[^\x21-\x7e]/.test(key)) return 'it contains characters that cannot travel in a header (only visible ASCII can)';
  if (key.length < MIN_API_KEY_LENGTH) return `it is shorter than ${MIN_API_KEY_LENGTH} characters`;
  return undefined;
}
