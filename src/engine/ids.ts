/** Random identifiers: `mcp_…`, `deploy_…`, `req_…`, `test_…`, staging names. Lower-case letters and digits only. */
import { randomBytes } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** `prefix_` followed by `length` random characters (36 symbols, so 10 characters ≈ 51 bits). */
export function newId(prefix: 'mcp' | 'deploy' | 'req' | 'test', length = prefix === 'req' ? 16 : 10): string {
  return `${prefix}_${randomChars(length)}`;
}

export const newDeploymentId = (): string => newId('deploy');
export const newStagingName = (): string => `stg-${randomChars(8)}`;
export const newRequestId = (): string => newId('req');

/** `length` random characters of the alphabet. */
function randomChars(length: number): string {
  const bytes = randomBytes(length * 2);
  let id = '';
  // Rejection sampling: 252 is the largest multiple of 36 below 256, so every symbol is equally likely.
  for (let i = 0; i < bytes.length && id.length < length; i += 1) {
    const byte = bytes[i]!;
    if (byte < 252) id += ALPHABET[byte % 36];
  }
  while (id.length < length) id += ALPHABET[randomBytes(1)[0]! % 36];
  return id;
}
