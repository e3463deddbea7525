/**
 * The keys deployments sign their input-required request states with (src/runtime/server/input-required.ts).
 * Every instance of one deployment gets the same key, so any instance can take the next round of
 * a request another one began; no other deployment has it, so a state one deployment signed is
 * refused by every other. Each key is an HMAC of the deployment's id under a secret of the engine,
 * kept in its home (mode 0600) so that restored deployments keep their keys across engine restarts.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The engine's secret, in its home. */
export const REQUEST_STATE_SECRET_FILE = 'request-state.secret';

export interface RequestStateKeys {
  /** the key of a deployment, for its instances' MCPCTL_REQUEST_STATE_KEY */
  keyOf(deploymentId: string): string;
}

const byHome = new Map<string, RequestStateKeys>();

/** The keys of the engine whose home is `home`; its secret is made on first use. */
export function requestStateKeys(home: string): RequestStateKeys {
  let keys = byHome.get(home);
  if (keys === undefined) {
    let secret: Buffer | undefined;
    keys = {
      keyOf(deploymentId) {
        secret ??= readOrCreateSecret(join(home, REQUEST_STATE_SECRET_FILE));
        return createHmac('sha256', secret).update(`mcpctl request state\0${deploymentId}`).digest('base64url');
      },
    };
    byHome.set(home, keys);
  }
  return keys;
}

function readOrCreateSecret(path: string): Buffer {
  try {
    return secretOf(readFileSync(path, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  try {
    // `wx`: when two engines of one home race here, one writes and both read what it wrote
    writeFileSync(path, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return secretOf(readFileSync(path, 'utf8'));
}

function secretOf(text: string): Buffer {
  const secret = Buffer.from(text.trim(), 'base64url');
  if (secret.length < 32)
    throw new Error(`the engine's request-state secret is shorter than 32 bytes: remove it to make a new one`);
  return secret;
}
