/**
 * The fields of an engine's /v1/health answer that a CLI shows, read without a schema library: the
 * engine is asked at the start of nearly every command, and loading one would cost more than asking.
 */

/** The warm runtime processes an engine shows in its health (engine.md, warm pool). */
export interface WarmPoolHealth {
  size: number;
  ready: number;
  warming: number;
}

/** What an engine's runtime processes run under (docs/security.md). */
export interface IsolationHealth {
  sandbox: string;
  limits: string;
  reasons: string[];
}

/** A store file the engine could not read and moved aside (store/unreadable.ts). */
export interface UnreadableHealth {
  file: string;
  kind: string;
  moved_at?: string;
  reason?: string;
  restore_to?: string;
}

export function readWarmPool(value: unknown): WarmPoolHealth | undefined {
  const pool = (typeof value === 'object' && value !== null ? value : {}) as Partial<
    Record<keyof WarmPoolHealth, unknown>
  >;
  const { size, ready, warming } = pool;
  if (typeof size !== 'number' || typeof ready !== 'number' || typeof warming !== 'number') return undefined;
  return { size, ready, warming };
}

export function readIsolation(value: unknown): IsolationHealth | undefined {
  const { sandbox, limits, reasons } = (typeof value === 'object' && value !== null ? value : {}) as Record<
    string,
    unknown
  >;
  if (typeof sandbox !== 'string' || typeof limits !== 'string') return undefined;
  return {
    sandbox,
    limits,
    reasons: Array.isArray(reasons) ? reasons.filter((reason): reason is string => typeof reason === 'string') : [],
  };
}

/** The files moved aside as the engine lists them; what is not a string is left out. */
export function readUnreadable(value: unknown): UnreadableHealth[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return value.flatMap((item: unknown) => {
    const entry = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
    const file = text(entry.file);
    if (file === undefined) return [];
    const optional = { moved_at: text(entry.moved_at), reason: text(entry.reason), restore_to: text(entry.restore_to) };
    return [
      {
        file,
        kind: text(entry.kind) ?? 'unknown',
        ...Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined)),
      },
    ];
  });
}
