/**
 * The engine's API key must carry at least 128 bits: a key shorter than 32 characters is refused,
 * with a message that says how long it must be.
 */
import { describe, expect, it } from 'vitest';
import { apiKeyProblem, MIN_API_KEY_LENGTH } from '../../src/engine/api-key.js';
import { generateApiKey } from '../../src/engine/engine-lock.js';

describe('the API key', () => {
  it('refuses a 16-character key and accepts 32 characters and the generated key', () => {
    expect(MIN_API_KEY_LENGTH).toBe(32);
    expect(apiKeyProblem('0123456789abcdef')).toBe(
      'it has 16 characters and needs at least 32 (128 bits as hex) so that it cannot be guessed',
    );
    expect(apiKeyProblem('0123456789abcdef0123456789abcde')).toMatch(/needs at least 32/);
    expect(apiKeyProblem('0123456789abcdef0123456789abcdef')).toBeUndefined();
    expect(apiKeyProblem(generateApiKey())).toBeUndefined();
  });
});
