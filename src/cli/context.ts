/**
 * What a command receives: its streams, environment, working folder, global options and the
 * output module. Tests build one with their own streams; the entry point builds one from `process`.
 */
import type { Readable } from 'node:stream';
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../api/timeouts.js';
import { EXIT, UserError } from './errors.js';
import type { Output, OutputStreams } from './output.js';

export interface IO extends OutputStreams {
  stdin: Readable & { isTTY?: boolean };
  env: Record<string, string | undefined>;
  cwd: string;
}

export interface GlobalOptions {
  json: boolean;
  quiet: boolean;
  color: boolean;
  debug: boolean;
  apiUrl?: string;
  profile?: string;
  /** --request-timeout, in seconds */
  requestTimeout?: number;
}

export interface CommandContext {
  io: IO;
  globals: GlobalOptions;
  out: Output;
  /** a signal that aborts on Ctrl-C, for long waits */
  signal: AbortSignal;
}

/** CI detection: the conventional variable most CI systems set. */
export function isCI(env: Record<string, string | undefined>): boolean {
  const value = env.CI;
  return value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false';
}

/**
 * How long a request may wait for its answer: --request-timeout, else MCPCTL_REQUEST_TIMEOUT,
 * else 30 s. A value that is not a number of seconds is a configuration error.
 */
export function requestTimeoutMs(ctx: { globals: Pick<GlobalOptions, 'requestTimeout'>; io: Pick<IO, 'env'> }): number {
  if (ctx.globals.requestTimeout !== undefined) return ctx.globals.requestTimeout * 1000;
  const raw = ctx.io.env.MCPCTL_REQUEST_TIMEOUT;
  if (raw === undefined || raw.trim() === '') return DEFAULT_REQUEST_TIMEOUT_MS;
  const seconds = Number(raw.trim());
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw new UserError(`MCPCTL_REQUEST_TIMEOUT is not a number of seconds: ${raw}`, {
      exitCode: EXIT.config,
      code: 'bad_config',
      hint: 'set it to a number of seconds > 0 (MCPCTL_REQUEST_TIMEOUT=60), or unset it for the default of 30',
    });
  }
  return seconds * 1000;
}
