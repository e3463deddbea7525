/**
 * Turning zod issues into the `details` of a `422 validation_failed`: one entry per problem, each
 * with the JSON path of the field in the request body (`tools[0].name`). Pure.
 */
import type { z } from 'zod';
import type { ErrorDetail } from '../../api/contract.js';
import { describeZodIssues } from '../../definition/zod-issues.js';
import { formatPath } from '../../shared/paths.js';
import { HttpError } from './respond.js';

type Issue = z.core.$ZodIssue;

export function issuesToDetails(issues: readonly Issue[], prefix: ReadonlyArray<PropertyKey> = []): ErrorDetail[] {
  return describeZodIssues(issues, undefined, prefix, { plain: true }).map((issue) => ({
    path: formatPath(issue.path),
    message: issue.message,
  }));
}

/** Parses `value` with `schema` or throws `422 validation_failed` naming every field. */
export function validateBody<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new HttpError(
    'validation_failed',
    'the request body does not match the contract',
    {},
    issuesToDetails(result.error.issues),
  );
}
