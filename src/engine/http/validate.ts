/**
 * Turning zod issues into the `details` of a `422 validation_failed`: one entry per problem, each
 * with the JSON path of the field in the request body (`tools[0].name`). Pure.
 */
import type { z } from 'zod';
import type { ErrorDetail } from '../../api/contract.js';
import { formatPath } from '../../shared/paths.js';
import { HttpError } from './respond.js';

type Issue = z.core.$ZodIssue;

export function issuesToDetails(issues: readonly Issue[], prefix: ReadonlyArray<PropertyKey> = []): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) details.push({ path: formatPath([...path, key]), message: 'unknown field' });
    } else if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      // Report the alternative that came closest (fewest problems) rather than "invalid input".
      const best = [...issue.errors].sort((a, b) => a.length - b.length)[0]!;
      details.push(...(best.length === 0 ? [{ path: formatPath(path), message: issue.message }] : issuesToDetails(best, path)));
    } else {
      details.push({ path: formatPath(path), message: issue.message });
    }
  }
  return details;
}

/** Parses `value` with `schema` or throws `422 validation_failed` naming every field. */
export function validateBody<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new HttpError('validation_failed', 'the request body does not match the contract', {}, issuesToDetails(result.error.issues));
}
