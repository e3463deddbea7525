/**
 * What makes a usable API key for the engine: it travels as `Authorization: Bearer <key>`, so
 * it is one token of visible ASCII, and long enough not to be guessed. Pure.
 */

/**
 * At least 128 bits: 32 hex characters carry exactly that (22 base64 characters would too, but
 * the alphabet of a given key cannot be known, so the bar is the length of the hex form).
 */
export const MIN_API_KEY_LENGTH = 32;

/** How to make a key that passes, for error hints. */
export const MAKE_API_KEY_HINT = 'make one with `openssl rand -hex 32` (64 hex characters, 256 bits)';

/** Why `key` cannot be the engine's API key, or undefined when it can. */
export function apiKeyProblem(key: string): string | undefined {
  if (key.trim() === '') return 'it is empty or only white space';
  if (/\s/.test(key)) return 'it contains white space, which cannot travel in an Authorization header';
  if (/[^\x21-\x7e]/.test(key)) return 'it contains characters that cannot travel in a header (only visible ASCII can)';
  if (key.length < MIN_API_KEY_LENGTH) {
    return `it has ${key.length} characters and needs at least ${MIN_API_KEY_LENGTH} (128 bits as hex) so that it cannot be guessed`;
  }
  return undefined;
}
