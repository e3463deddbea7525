/** The request timeout the CLI gives its client: a flag, an environment variable, a default. */
import type { GlobalOptions, IO } from './context.js';
import { EXIT, UserError } from '../shared/errors.js';
import { SETTINGS, settingValue } from '../shared/settings.js';

/**
 * How long a request may wait for its answer: --request-timeout, else MCPCTL_REQUEST_TIMEOUT,
 * else 30 s. A value that is not a number of seconds is a configuration error.
 */
export function requestTimeoutMs(ctx: { globals: Pick<GlobalOptions, 'requestTimeout'>; io: Pick<IO, 'env'> }): number {
  const sources = { env: ctx.io.env, flag: ctx.globals.requestTimeout };
  const seconds = settingValue(SETTINGS.requestTimeout, sources, (message) => {
    return new UserError(message, {
      exitCode: EXIT.config,
      code: 'bad_config',
      hint: `set it to a number of seconds > 0 (MCPCTL_REQUEST_TIMEOUT=60), or unset it for the default of ${SETTINGS.requestTimeout.default}`,
    });
  });
  return seconds * 1000;
}
