/** The log tail's bookkeeping: which lines a filter keeps and how many are kept. Pure. */
import type { LogLine } from './api-types.js';

/** The most lines the tail keeps; older ones fall off the top. */
export const MAX_LOG_LINES = 1000;

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const RANK: Record<string, number> = {
  trace: 0,
  debug: 0,
  info: 1,
  notice: 1,
  warn: 2,
  warning: 2,
  error: 3,
  fatal: 3,
};

/** A line of the stream as a log line, or undefined when it is not one (it is then skipped). */
export function toLogLine(value: Record<string, unknown> | undefined): LogLine | undefined {
  if (value === undefined || typeof value.message !== 'string') return undefined;
  return {
    time: typeof value.time === 'string' ? value.time : '',
    level: typeof value.level === 'string' ? value.level : 'info',
    message: value.message,
    ...(typeof value.instance === 'string' ? { instance: value.instance } : {}),
    ...(typeof value.request_id === 'string' ? { request_id: value.request_id } : {}),
  };
}

/** Lines at `level` or above whose message, instance or request id contains `text` (any case). */
export function filterLogLines(lines: readonly LogLine[], level: LogLevel, text: string): LogLine[] {
  const min = RANK[level] ?? 0;
  const needle = text.trim().toLowerCase();
  return lines.filter((line) => {
    if ((RANK[line.level.toLowerCase()] ?? 1) < min) return false;
    if (needle === '') return true;
    return [line.message, line.instance ?? '', line.request_id ?? ''].some((field) =>
      field.toLowerCase().includes(needle),
    );
  });
}

/** `lines` followed by `added`, the newest `max` of them. */
export function appendCapped<T>(lines: readonly T[], added: readonly T[], max = MAX_LOG_LINES): T[] {
  const all = lines.concat(added);
  return all.length > max ? all.slice(all.length - max) : all;
}
