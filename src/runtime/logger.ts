/**
 * Structured logging of the runtime: one JSON object per line. Secrets (the values `${VAR}`
 * references resolve to, a deployment's environment, bearer tokens) are replaced before a line
 * is written, at every level.
 */
import { isSecretName } from '../shared/secret-name.js';

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

/**
 * The values to hide: what `${VAR}` references resolved to, a deployment's environment, a bearer
 * token. It grows while a runtime compiles its definition, so whatever holds it (the logger, the
 * error texts of tool calls) sees every value added, also after it was handed over.
 */
export class Secrets {
  private readonly values = new Set<string>();
  private longestFirst: string[] | undefined;

  constructor(values: Iterable<string> = []) {
    for (const value of values) this.add(value);
  }

  /** Values shorter than MIN_SECRET_LENGTH are ignored: they would appear by chance everywhere. */
  add(value: string): void {
    if (value.length < MIN_SECRET_LENGTH || this.values.has(value)) return;
    this.values.add(value);
    this.longestFirst = undefined;
  }

  get size(): number {
    return this.values.size;
  }

  /** Longest first, so a secret that contains another is replaced whole. */
  list(): readonly string[] {
    this.longestFirst ??= [...this.values].sort((a, b) => b.length - a.length);
    return this.longestFirst;
  }

  /** `text` with every secret replaced by [redacted]. */
  redactText(text: string): string {
    let out = text;
    for (const secret of this.list()) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  }
}

/** Wraps a logger so that every secret inside an entry is replaced, at any depth. */
export function redactingLogger(inner: RuntimeLogger, secrets: Secrets): RuntimeLogger {
  return {
    debug: inner.debug,
    log(entry) {
      if (entry.level === 'debug' && !inner.debug) return;
      inner.log(redact(entry, secrets.list()) as LogEntry);
    },
  };
}

/** Fields a log line is read by (its time, level and event name): never rewritten. */
const STRUCTURAL_KEYS = new Set(['time', 'level', 'event']);

/** Replaces secrets inside strings and truncates long strings; keys named like credentials are hidden. */
export function redact(value: unknown, secrets: readonly string[], key = '', depth = 0): unknown {
  if (typeof value === 'string') {
    if (depth === 1 && STRUCTURAL_KEYS.has(key)) return value;
    if (isSecretName(key) && value !== '') return REDACTED;
    let out = value;
    for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out.length > MAX_LOGGED_STRING ? `${out.slice(0, MAX_LOGGED_STRING)}… (${out.length} characters)` : out;
  }
  if (Array.isArray(value)) return value.map((item) => redact(item, secrets, '', depth + 1));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, item] of Object.entries(value)) out[k] = redact(item, secrets, k, depth + 1);
    return out;
  }
  return value;
}
