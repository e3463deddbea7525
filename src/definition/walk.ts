/**
 * Reading the raw parsed YAML defensively, for the semantic checks: every reader accepts any value
 * and answers with what is there, so the checks run even where the schema found problems. Pure.
 */
import type { FieldPath } from '../shared/paths.js';

export type Path = Array<string | number>;
export type Rec = Record<string, unknown>;

export interface CheckOptions {
  /** what is at a path relative to the definition folder; omit to skip existence checks */
  stat?: (relativePath: string) => 'file' | 'dir' | undefined;
}

/** What each check gets: the document, the options, and where to report. */
export interface CheckContext {
  def: Rec;
  options: CheckOptions;
  error: (path: FieldPath, message: string) => void;
  warn: (path: FieldPath, message: string) => void;
}

export function asRecord(value: unknown): Rec | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Rec) : undefined;
}
export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
/** The items of a list field that are maps, with their index. */
export function items(value: unknown): Array<[number, Rec]> {
  const out: Array<[number, Rec]> = [];
  asArray(value).forEach((item, i) => {
    const record = asRecord(item);
    if (record !== undefined) out.push([i, record]);
  });
  return out;
}
/** Every string inside a value, with its path. */
export function* strings(value: unknown, path: Path): Generator<[Path, string]> {
  if (typeof value === 'string') yield [path, value];
  else if (Array.isArray(value)) for (let i = 0; i < value.length; i++) yield* strings(value[i], [...path, i]);
  else if (asRecord(value) !== undefined)
    for (const [k, v] of Object.entries(value as Rec)) yield* strings(v, [...path, k]);
}
