/**
 * How a deployment's log reads: a runtime's JSON log line as a deployment log line, the runtime's
 * own health-check lines left out, and the start queue as a stage says it. Pure.
 */
import type { LogLine } from '../../api/contract.js';
import { isoTime } from '../../shared/iso-time.js';

/**
 * The queue ahead, as a stage says it: exact when short, in tens when long (each change of a
 * stage wakes every client following the deployment, so a long queue should not wake them at
 * every step).
 */
export function describeAhead(ahead: number): string {
  if (ahead === 0) return 'next in line';
  if (ahead <= 10) return `${ahead} start${ahead === 1 ? '' : 's'} ahead`;
  return `${Math.floor(ahead / 10) * 10}+ starts ahead`;
}

const LEVELS = new Set(['debug', 'info', 'warn', 'error']);
const OWN_FIELDS = new Set(['time', 'level', 'msg', 'message', 'event', 'request_id', 'pid', 'hostname']);

/** A runtime log object as a deployment log line: its message (or event), then its other fields as key=value. */
export function toLogLine(line: Record<string, unknown>, instance: string, now: number): LogLine {
  const level = typeof line.level === 'string' && LEVELS.has(line.level) ? line.level : 'info';
  // one of these comes with every line of a running instance: no arrays made on the way
  let message =
    typeof line.msg === 'string'
      ? line.msg
      : typeof line.message === 'string'
        ? line.message
        : typeof line.event === 'string'
          ? line.event
          : '';
  for (const key of Object.keys(line)) {
    if (OWN_FIELDS.has(key)) continue;
    const value = line[key];
    const field = `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`;
    message = message === '' ? field : `${message} ${field}`;
  }
  return {
    time: typeof line.time === 'string' ? line.time : isoTime(now),
    level,
    message,
    instance,
    ...(typeof line.request_id === 'string' ? { request_id: line.request_id } : {}),
  };
}

/** The runtime's own line for a successful /health request: the supervisor's checks, not news. */
export function isHealthCheckLine(line: Record<string, unknown>): boolean {
  return line.event === 'request' && line.path === '/health' && typeof line.status === 'number' && line.status < 400;
}

/** The runtime writes JSON log lines; anything else (stderr text) is kept as a warning. */
export function parseLogLine(raw: string): Record<string, unknown> {
  if (raw.startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(raw);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
        return parsed as Record<string, unknown>;
    } catch {
      // not JSON after all
    }
  }
  return { level: 'warn', msg: raw };
}

/** How a process ended, as a reason says it. */
export function describeExit(exit: { code: number | null; signal: string | null }): string {
  return exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${exit.code ?? 'unknown'}`;
}
