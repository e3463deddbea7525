/**
 * Structured logging of the runtime: one JSON object per line. Secrets (the values `${VAR}`
 * references resolve to, a deployment's environment, bearer tokens) are replaced before a line
 * is written, at every level.
 */
import { isSecretName } from '../../shared/secret-name.js';

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

/** What hides secret values in a text: a runtime's own Secrets, or the engine's registry of every deployment's. */
export interface Redactor {
  /** how many values it hides */
  readonly size: number;
  /** `text` with every secret replaced by [redacted] */
  redactText(text: string): string;
}

/**
 * One expression matching any of `values`, longest first (so a secret that contains another is
 * replaced whole): a line is scanned once, however many secrets there are, instead of once per
 * secret. Undefined when there is nothing to match.
 */
export function secretMatcher(values: Iterable<string>): RegExp | undefined {
  const sorted = [...values].sort((a, b) => b.length - a.length);
  if (sorted.length === 0) return undefined;
  return new RegExp(sorted.map((value) => value.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')).join('|'), 'g');
}

/** `text` with every match of `matcher` replaced by [redacted]. */
export function replaceSecrets(text: string, matcher: RegExp | undefined): string {
  if (matcher === undefined || text.length < MIN_SECRET_LENGTH) return text;
  matcher.lastIndex = 0;
  return matcher.test(text) ? text.replace(matcher, REDACTED) : text;
}

/** Whether a value is long enough to be hidden: shorter ones would appear by chance everywhere. */
export function isRedactable(value: string): boolean {
  return value.length >= MIN_SECRET_LENGTH;
}

/**
 * The values to hide: what `${VAR}` references resolved to, a deployment's environment, a bearer
 * token. It grows while a runtime compiles its definition, so whatever holds it (the logger, the
 * error texts of tool calls) sees every value added, also after it was handed over.
 */
export class Secrets implements Redactor {
  private readonly values = new Set<string>();
  private matcher: RegExp | undefined;
  private stale = false;

  constructor(values: Iterable<string> = []) {
    for (const value of values) this.add(value);
  }

  /** Values shorter than MIN_SECRET_LENGTH are ignored: they would appear by chance everywhere. */
  add(value: string): void {
    if (!isRedactable(value) || this.values.has(value)) return;
    this.values.add(value);
    this.stale = true;
  }

  get size(): number {
    return this.values.size;
  }

  redactText(text: string): string {
    if (this.stale) {
      this.matcher = secretMatcher(this.values);
      this.stale = false;
    }
    return replaceSecrets(text, this.matcher);
  }
}

/** Wraps a logger so that every secret inside an entry is replaced, at any depth. */
export function redactingLogger(inner: RuntimeLogger, secrets: Redactor): RuntimeLogger {
  return {
    debug: inner.debug,
    log(entry) {
      if (entry.level === 'debug' && !inner.debug) return;
      inner.log(redact(entry, secrets) as LogEntry);
    },
  };
}

/** Fields a log line is read by (its time, level and event name): never rewritten. */
const STRUCTURAL_KEYS = new Set(['time', 'level', 'event']);

/** Replaces secrets inside strings and truncates long strings; keys named like credentials are hidden. */
export function redact(value: unknown, secrets: Redactor, key = '', depth = 0): unknown {
  if (typeof value === 'string') {
    if (depth === 1 && STRUCTURAL_KEYS.has(key)) return value;
    if (isSecretName(key) && value !== '') return REDACTED;
    const out = secrets.size === 0 ? value : secrets.redactText(value);
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
