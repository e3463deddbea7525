/**
 * Structured logging of the runtime: one JSON object per line. Secrets (values of the `${VAR}`
 * references a definition uses, bearer tokens) are replaced before a line is written.
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface LogEntry {
  level: LogLevel;
  event: string;
  [field: string]: unknown;
}

export interface RuntimeLogger {
  /** true when request parameters and results are logged too */
  readonly debug: boolean;
  log(entry: LogEntry): void;
}

export const REDACTED = '[redacted]';
/** Shorter values are too likely to appear by chance to be worth replacing. */
const MIN_SECRET_LENGTH = 4;
/** Longest string kept in a debug log field. */
const MAX_LOGGED_STRING = 2000;

/** A logger that writes JSON lines through `write`. */
export function createJsonLogger(write: (line: string) => void, options: { debug?: boolean } = {}): RuntimeLogger {
  const debug = options.debug === true;
  return {
    debug,
    log(entry) {
      if (entry.level === 'debug' && !debug) return;
      write(JSON.stringify({ time: new Date().toISOString(), ...entry }));
    },
  };
}

/** A logger that drops everything. */
export const silentLogger: RuntimeLogger = { debug: false, log() {} };

/** Wraps a logger so that every secret inside an entry is replaced, at any depth. */
export function redactingLogger(inner: RuntimeLogger, secrets: Iterable<string>): RuntimeLogger {
  const list = [...new Set(secrets)].filter((s) => s.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
  return {
    debug: inner.debug,
    log(entry) {
      if (entry.level === 'debug' && !inner.debug) return;
      inner.log(redact(entry, list) as LogEntry);
    },
  };
}

/** Replaces secrets inside strings and truncates long strings; keys named like credentials are hidden. */
export function redact(value: unknown, secrets: readonly string[], key = ''): unknown {
  if (typeof value === 'string') {
    if (/^(authorization|token|password|secret|api[_-]?key)$/i.test(key) && value !== '') return REDACTED;
    let out = value;
    for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out.length > MAX_LOGGED_STRING ? `${out.slice(0, MAX_LOGGED_STRING)}… (${out.length} characters)` : out;
  }
  if (Array.isArray(value)) return value.map((item) => redact(item, secrets));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, item] of Object.entries(value)) out[k] = redact(item, secrets, k);
    return out;
  }
  return value;
}
