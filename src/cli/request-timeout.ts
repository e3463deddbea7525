/** The request timeout the CLI gives its client: a flag, an environment variable, a default. */
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../api/timeouts.js';
import type { GlobalOptions, IO } from './context.js';
import { EXIT, UserError } from '../shared/errors.js';

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
