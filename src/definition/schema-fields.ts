/**
 * The small field schemas every section of a definition shares (descriptions, time-outs, sizes,
 * URLs, environment maps), and `once`, which builds a section's schema on its first use. Pure: no IO.
 */
import { z } from 'zod';
import { ENV_NAME_PATTERN, LIMITS } from './names.js';

/** A schema built on its first use, then kept. */
export function once<T>(build: () => T): () => T {
  let built: T | undefined;
  return () => (built ??= build());
}

export const description = z.string().min(1, 'must not be empty').max(LIMITS.descriptionLength);
export const timeoutMs = z.number().int().positive().max(LIMITS.timeoutMs).describe('time-out in milliseconds');
export const maxBytes = z.number().int().positive().max(LIMITS.maxBytes).describe('largest accepted output, in bytes');
// The base of a URL may come from the environment: `${API_BASE}/items`.
export const httpUrl = z
  .string()
  .regex(/^(https?:\/\/|\$\{)/, 'must be an http:// or https:// URL (or start with a ${VAR} reference)');
export const envMap = z
  .record(z.string().regex(ENV_NAME_PATTERN, 'must be an environment variable name'), z.string())
  .describe('environment variables; values may use ${VAR} references');
