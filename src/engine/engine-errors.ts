/** The engine's own configuration errors, below the modules that detect them. */

/** The engine cannot start as configured (an unusable API key, a sandbox it must have); the message says what to change. */
export class EngineConfigError extends Error {
  override readonly name = 'EngineConfigError';
}
