/**
 * The key a deployed instance signs its input-required request states with: the engine gives every
 * instance of a deployment the same one, in MCPCTL_REQUEST_STATE_KEY. It is taken out of the
 * process's environment before anything else reads it, so a module handler (which runs in this
 * process) and an exec handler's program never see it.
 */
import { REQUEST_STATE_KEY_ENV } from '../constants.js';

/** The SDK's codec asks for at least 256 bits. */
const MIN_KEY_LENGTH = 32;

/** Removes the key from `env` and returns it; undefined when there is none (a key of this process is used). */
export function takeRequestStateKey(env: NodeJS.ProcessEnv): string | undefined {
  const key = env[REQUEST_STATE_KEY_ENV];
  delete env[REQUEST_STATE_KEY_ENV];
  if (key === undefined || key === '') return undefined;
  if (key.length < MIN_KEY_LENGTH) {
    throw new Error(
      `${REQUEST_STATE_KEY_ENV} has ${key.length} characters and needs at least ${MIN_KEY_LENGTH}; leave it unset for a key of this process`,
    );
  }
  return key;
}
