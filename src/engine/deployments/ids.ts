/** Random identifiers: lower-case letters and digits from the system's CSPRNG. */
import { randomBytes } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

export function randomName(length: number): string {
  const bytes = randomBytes(length * 2);
  let out = '';
  // 252 is the largest multiple of 36 below 256: skipping bytes above it keeps the letters uniform.
  for (const byte of bytes) {
    if (byte >= 252) continue;
    out += ALPHABET[byte % 36];
    if (out.length === length) return out;
  }
  return out + randomName(length - out.length);
}

export const newDeploymentId = (): string => `deploy_${randomName(10)}`;
export const newStagingName = (): string => `stg-${randomName(8)}`;
export const newRequestId = (): string => `req_${randomName(16)}`;
