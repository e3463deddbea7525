/**
 * Small readers of a request's query and headers, each failing with `400 bad_request` that names
 * the parameter and says what it must be.
 */
import type { IncomingMessage } from 'node:http';
import { HttpError } from './respond.js';

export function badQuery(name: string, message: string): HttpError {
  return new HttpError('bad_request', `the query parameter ${name} ${message}`, {}, [
    { path: `query.${name}`, message },
  ]);
}

export function readNumber(
  query: URLSearchParams,
  name: string,
  bounds: { min: number; max: number; integer: boolean },
): number | undefined {
  const raw = query.get(name);
  if (raw === null) return undefined;
  const value = raw.trim() === '' ? Number.NaN : Number(raw);
  const kind = bounds.integer ? 'a whole number' : 'a number';
  if (
    !Number.isFinite(value) ||
    (bounds.integer && !Number.isInteger(value)) ||
    value < bounds.min ||
    value > bounds.max
  ) {
    throw badQuery(name, `must be ${kind} from ${bounds.min} to ${bounds.max}`);
  }
  return value;
}

export function readEnum<T extends string>(query: URLSearchParams, name: string, allowed: readonly T[]): T | undefined {
  const raw = query.get(name);
  if (raw === null) return undefined;
  if (!(allowed as readonly string[]).includes(raw)) throw badQuery(name, `must be one of ${allowed.join(', ')}`);
  return raw as T;
}

/** A comma-separated list of allowed values (`a,b`); undefined when the parameter is absent. */
export function readEnumList<T extends string>(
  query: URLSearchParams,
  name: string,
  allowed: readonly T[],
): Set<T> | undefined {
  const raw = query.get(name);
  if (raw === null) return undefined;
  const values = raw.split(',').map((value) => value.trim());
  const unknown = values.filter((value) => !(allowed as readonly string[]).includes(value));
  if (unknown.length > 0)
    throw badQuery(name, `must be one or more of ${allowed.join(', ')}, comma-separated (not ${unknown.join(', ')})`);
  return new Set(values as T[]);
}

export function readTime(query: URLSearchParams, name: string): string | undefined {
  const raw = query.get(name);
  if (raw === null) return undefined;
  const time = Date.parse(raw);
  if (Number.isNaN(time)) throw badQuery(name, 'must be an ISO 8601 time such as 2026-01-31T12:00:00Z');
  return new Date(time).toISOString();
}

export function readBoolean(query: URLSearchParams, name: string): boolean {
  const raw = query.get(name);
  if (raw === null) return false;
  if (['1', 'true', 'yes', ''].includes(raw)) return true;
  if (['0', 'false', 'no'].includes(raw)) return false;
  throw badQuery(name, 'must be 1 or 0');
}

/** `Prefer: respond-async` (RFC 7240), among other preferences. */
export function prefersAsync(req: IncomingMessage): boolean {
  const raw = req.headers.prefer;
  if (raw === undefined) return false;
  return (Array.isArray(raw) ? raw.join(',') : raw)
    .split(',')
    .map((part) => part.split(';')[0]!.trim().toLowerCase())
    .includes('respond-async');
}

export function readIfNoneMatch(req: IncomingMessage): string[] | undefined {
  const header = req.headers['if-none-match'];
  if (header === undefined || header.trim() === '') return undefined;
  return header.split(',').map((tag) => {
    const trimmed = tag.trim().replace(/^W\//, '');
    return trimmed.startsWith('"') ? trimmed : `"${trimmed}"`;
  });
}
