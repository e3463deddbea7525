/**
 * What a command receives: its streams, environment, working folder, global options and the
 * output module. Tests build one with their own streams; the entry point builds one from `process`.
 */
import type { Readable } from 'node:stream';
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
