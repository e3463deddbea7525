/**
 * The engine's log: one JSON object per line (`time`, `level`, `msg`, then fields such as
 * `request_id`). Written to a file by the background engine and to stdout by `mcpctl serve`.
 * The engine wraps it with `redactingEngineLogger`, so no line carries a value it hides.
 */
import type { Redactor } from '../runtime/server/logger.js';
import { isoTime } from '../shared/iso-time.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface CreateLoggerOptions {
  write: (line: string) => void;
  /** lowest level written; default info */
  level?: LogLevel;
  clock?: () => number;
}

export function createLogger(options: CreateLoggerOptions, base: Record<string, unknown> = {}): Logger {
  const min = RANK[options.level ?? 'info'];
  const clock = options.clock ?? Date.now;
  const emit = (level: LogLevel, message: string, fields?: Record<string, unknown>): void => {
    if (RANK[level] < min) return;
    const entry = { time: isoTime(clock()), level, msg: message, ...base, ...serializeFields(fields) };
    let line: string;
    try {
      line = JSON.stringify(entry);
    } catch {
      line = JSON.stringify({ time: entry.time, level, msg: message, ...base, note: 'fields could not be serialized' });
    }
    options.write(`${line}\n`);
  };
  return {
    debug: (message, fields) => emit('debug', message, fields),
    info: (message, fields) => emit('info', message, fields),
    warn: (message, fields) => emit('warn', message, fields),
    error: (message, fields) => emit('error', message, fields),
    child: (fields) => createLogger(options, { ...base, ...fields }),
  };
}

/**
 * `write` for the lines of `delayMs` at once (the engine logs a line per request): one write for
 * the lines of many requests instead of one per line or per turn of the event loop. What is still
 * waiting is written when the process exits.
 */
export function batchedWrite(write: (text: string) => void, delayMs = 20): (line: string) => void {
  let pending: string[] = [];
  const flush = (): void => {
    if (pending.length === 0) return;
    const text = pending.join('');
    pending = [];
    write(text);
  };
  process.on('exit', flush);
  return (line) => {
    if (pending.push(line) === 1) setTimeout(flush, delayMs).unref();
  };
}

/**
 * `inner` with every value of `secrets` replaced by [redacted], in the message and in every string
 * of the fields at any depth (errors included): whichever deployment's value a line quotes.
 */
export function redactingEngineLogger(inner: Logger, secrets: Redactor): Logger {
  const emit =
    (level: LogLevel) =>
    (message: string, fields?: Record<string, unknown>): void => {
      if (secrets.size === 0) return inner[level](message, fields);
      inner[level](
        secrets.redactText(message),
        fields === undefined ? undefined : (redactFields(fields, secrets) as Record<string, unknown>),
      );
    };
  return {
    debug: emit('debug'),
    info: emit('info'),
    warn: emit('warn'),
    error: emit('error'),
    child: (fields) => redactingEngineLogger(inner.child(fields), secrets),
  };
}

/** Strings replaced at any depth; an error becomes its name, message and stack, each redacted. */
function redactFields(value: unknown, secrets: Redactor, depth = 0): unknown {
  if (typeof value === 'string') return secrets.redactText(value);
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error)
    return redactFields({ name: value.name, message: value.message, stack: value.stack }, secrets, depth + 1);
  if (Array.isArray(value)) return value.map((item) => redactFields(item, secrets, depth + 1));
  // a Date and the like: written as its toJSON says
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = redactFields(item, secrets, depth + 1);
  return out;
}

/** A logger that drops everything (tests, library use). */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child: () => silentLogger,
};

export function parseLogLevel(value: string | undefined): LogLevel | undefined {
  return value === 'debug' || value === 'info' || value === 'warn' || value === 'error' ? value : undefined;
}

function serializeFields(fields: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (fields === undefined) return undefined;
  // Most lines (a request's) hold no error: they are taken as they are, not copied.
  let errors = false;
  for (const key in fields) if (fields[key] instanceof Error) errors = true;
  if (!errors) return fields;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] = value instanceof Error ? { name: value.name, message: value.message, stack: value.stack } : value;
  }
  return out;
}

/** The engine's structured log: one JSON line per call, with the fields given. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  /** a logger that adds these fields to every line */
  child(fields: Record<string, unknown>): Logger;
}
