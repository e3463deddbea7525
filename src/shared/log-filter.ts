/**
 * Which log lines a reader wants: a level and the ones above it, a text or `/regular expression/`
 * in the message, one instance. The engine filters with it (the `level`, `grep` and `instance`
 * parameters of the logs endpoint) and the CLI does too, so a service that ignores them still
 * shows what was asked. Expressions run on RE2 (linear time): no search can stall the engine; it
 * loads only for an expression. Pure.
 */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The longest `grep` accepted: a search, not a program. */
export const GREP_MAX_LENGTH = 500;

export interface LogFilter {
  /** this level and those above it */
  level?: LogLevel | undefined;
  /** a text (any case) or `/expression/flags` (flags i, m, s) found in the message or the request id */
  grep?: string | undefined;
  /** lines of this instance only */
  instance?: string | undefined;
}

export interface FilteredLine {
  level: string;
  message: string;
  instance?: string | undefined;
  request_id?: string | undefined;
}

/** A `grep` that cannot be used, with the reason. */
export class LogFilterError extends Error {
  override readonly name = 'LogFilterError';
}

/** The test a filter makes, or undefined when it lets every line through. Throws LogFilterError. */
export async function compileLogFilter(filter: LogFilter): Promise<((line: FilteredLine) => boolean) | undefined> {
  const rank = filter.level === undefined ? 0 : LOG_LEVELS.indexOf(filter.level);
  const search = filter.grep === undefined || filter.grep === '' ? undefined : await compileGrep(filter.grep);
  const instance = filter.instance;
  if (rank === 0 && search === undefined && instance === undefined) return undefined;
  return (line) =>
    (rank === 0 || levelRank(line.level) >= rank) &&
    (instance === undefined || line.instance === instance) &&
    (search === undefined || search(line.message) || (line.request_id !== undefined && search(line.request_id)));
}

/** A level the reader does not know counts as info. */
function levelRank(level: string): number {
  const rank = (LOG_LEVELS as readonly string[]).indexOf(level);
  return rank < 0 ? 1 : rank;
}

async function compileGrep(grep: string): Promise<(text: string) => boolean> {
  if (grep.length > GREP_MAX_LENGTH) throw new LogFilterError(`is longer than ${GREP_MAX_LENGTH} characters`);
  const expression = /^\/(.+)\/([a-z]*)$/s.exec(grep);
  if (expression === null) {
    const wanted = grep.toLowerCase();
    return (text) => text.toLowerCase().includes(wanted);
  }
  const flags = expression[2]!;
  if (/[^ims]/.test(flags)) throw new LogFilterError(`/…/${flags}: only the flags i, m and s are supported`);
  const { compileLinear } = await import('./linear-regexp.js');
  try {
    const pattern = compileLinear(expression[1]!, flags);
    return (text) => pattern.test(text);
  } catch (error) {
    throw new LogFilterError(`is not a usable expression: ${error instanceof Error ? error.message : String(error)}`);
  }
}
