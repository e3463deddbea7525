/**
 * The lines a runtime process writes about its start, as data: `warm` (loaded, waiting for a
 * bundle), `listening` (its port, URL and socket) and `start_failed` (why it cannot serve).
 */
import type { Problem } from '../../shared/errors.js';

export function parseWarm(line: string): boolean {
  try {
    return (JSON.parse(line) as { event?: unknown }).event === 'warm';
  } catch {
    return false;
  }
}

/** A `start_failed` line: its message and its problems, `{ path, message }` each. */
export function parseStartFailed(line: string): { error: string; problems: Problem[] } | undefined {
  try {
    const value = JSON.parse(line) as { event?: unknown; error?: unknown; problems?: unknown };
    if (value.event !== 'start_failed' || typeof value.error !== 'string') return undefined;
    const problems: Problem[] = [];
    for (const item of Array.isArray(value.problems) ? (value.problems as unknown[]) : []) {
      const { path, message } = (item ?? {}) as { path?: unknown; message?: unknown };
      if (typeof message === 'string')
        problems.push(typeof path === 'string' && path !== '' ? { path, message } : { message });
    }
    return { error: value.error, problems };
  } catch {
    return undefined;
  }
}

/** What the listening line says: the port, its URL, and the Unix socket when it listens on one too. */
export interface Listening {
  port: number;
  url: string;
  socket?: string;
}

export function parseListening(line: string): Listening | undefined {
  try {
    const value = JSON.parse(line) as { event?: unknown; port?: unknown; url?: unknown; socket?: unknown };
    if (value.event === 'listening' && typeof value.port === 'number' && typeof value.url === 'string') {
      return {
        port: value.port,
        url: value.url,
        ...(typeof value.socket === 'string' ? { socket: value.socket } : {}),
      };
    }
  } catch {
    // not JSON
  }
  return undefined;
}
