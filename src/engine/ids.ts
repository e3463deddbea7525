/** Random identifiers: `mcp_…`, `deploy_…`, `req_…`, `test_…`, staging names. Lower-case letters and digits only. */
import { randomFillSync } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** `prefix_` followed by `length` random characters (36 symbols, so 10 characters ≈ 51 bits). */
export function newId(prefix: 'mcp' | 'deploy' | 'req' | 'test', length = prefix === 'req' ? 16 : 10): string {
  return `${prefix}_${randomChars(length)}`;
}

export const newDeploymentId = (): string => newId('deploy');
export const newStagingName = (): string => `stg-${randomChars(8)}`;
export const newRequestId = (): string => newId('req');

/**
 * Random bytes are drawn from a pool filled 4 KiB at a time (as Node does for randomUUID): an id
 * per request (`req_…`) would otherwise cost a system call and a buffer each.
 */
const pool = Buffer.alloc(4096);
let used = pool.length;

function randomByte(): number {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const byte = pool[used]!;
  pool[used++] = 0;
  return byte;
}

/** `length` random characters of the alphabet. */
function randomChars(length: number): string {
  let id = '';
  // Rejection sampling: 252 is the largest multiple of 36 below 256, so every symbol is equally likely.
  while (id.length < length) {
    const byte = randomByte();
    if (byte < 252) id += ALPHABET[byte % 36];
  }
  return id;
}
