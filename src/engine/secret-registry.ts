/**
 * The engine's one set of values to hide: its API key (and the other keys it holds) and the
 * env_vars values of every deployment it has in memory. Every log line the engine records and every
 * answer it gives is passed through it, so a deployment that prints another deployment's value, or
 * the engine's key, shows `[redacted]` wherever it lands. Values are counted per owner: one used by
 * two deployments stays hidden until both are gone. The matcher (one expression for all values) is
 * rebuilt only when the set changes.
 *
 * Across deployments a value counts from SHARED_MIN_LENGTH characters: a short value (`info`,
 * `prod`) of one deployment would otherwise blank that word out of every other deployment's log. A
 * deployment's own shorter values (from 4 characters, as the runtime's) are hidden from its own log.
 */
import { isSecretName } from '../shared/secret-name.js';
import { replaceSecrets, Secrets, secretMatcher, type Redactor } from '../runtime/server/logger.js';

/** The owner of the engine's own keys. */
export const ENGINE_OWNER = 'engine';
/** Shortest value hidden from every deployment's log (the API key is far longer). */
export const SHARED_MIN_LENGTH = 8;
/** Variables of the engine's environment that hold credentials of its own (model providers' keys and the like). */
const CREDENTIAL_NAME = /(?:^|_)(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSPHRASE|PRIVATE_KEY|CREDENTIALS?)(?:_|$)/i;

export class SecretRegistry implements Redactor {
  /** value → the owners that hold it */
  private readonly holders = new Map<string, Set<string>>();
  private matcher: RegExp | undefined;
  private stale = false;

  /** Hides `values` for as long as `owner` holds them (too short ones are ignored). */
  add(owner: string, values: Iterable<string | undefined>): void {
    for (const value of values) {
      if (value === undefined || value.length < SHARED_MIN_LENGTH) continue;
      const owners = this.holders.get(value);
      if (owners === undefined) {
        this.holders.set(value, new Set([owner]));
        this.stale = true;
      } else owners.add(owner);
    }
  }

  /** Forgets what `owner` held; a value another owner holds stays hidden. */
  release(owner: string): void {
    for (const [value, owners] of this.holders) {
      if (!owners.delete(owner) || owners.size > 0) continue;
      this.holders.delete(value);
      this.stale = true;
    }
  }

  get size(): number {
    return this.holders.size;
  }

  redactText(text: string): string {
    if (this.stale) {
      this.matcher = secretMatcher(this.holders.keys());
      this.stale = false;
    }
    return replaceSecrets(text, this.matcher);
  }
}

/** What the engine hides from the start: its API key and the credentials of its own environment. */
export function engineSecretValues(apiKey: string, env: Record<string, string | undefined>): string[] {
  const values = [apiKey];
  for (const [name, value] of Object.entries(env))
    if (value !== undefined && CREDENTIAL_NAME.test(name) && isSecretName(name)) values.push(value);
  return values;
}

/**
 * What a deployment's lines and reasons pass through: every value of the engine's set, then the
 * deployment's own shorter ones. Its values join the engine's set until `release`.
 */
export function deploymentRedactor(
  registry: SecretRegistry,
  owner: string,
  values: string[],
): Redactor & { release(): void } {
  const own = new Secrets(values);
  registry.add(owner, values);
  return {
    get size() {
      return registry.size + own.size;
    },
    redactText: (text) => own.redactText(registry.redactText(text)),
    release: () => registry.release(owner),
  };
}
