/**
 * The keys deployments sign their input-required request states with: one per deployment, the same
 * for every instance of it and after an engine restart, derived from a secret of the engine's home
 * that only its owner can read.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REQUEST_STATE_SECRET_FILE, requestStateKeys } from '../../../src/engine/deployments/request-state-keys.js';
import { tempDir } from '../../support/temp.js';

describe('request-state keys', () => {
  it('gives each deployment its own key, the same every time it is asked', async () => {
    await using home = await tempDir();
    const keys = requestStateKeys(home.dir);
    const a = keys.keyOf('dep_a');
    expect(a.length).toBeGreaterThanOrEqual(32);
    expect(keys.keyOf('dep_a')).toBe(a);
    expect(keys.keyOf('dep_b')).not.toBe(a);
  });

  it('keeps its secret in the home, readable by its owner alone', async () => {
    await using home = await tempDir();
    requestStateKeys(home.dir).keyOf('dep_a');
    const file = join(home.dir, REQUEST_STATE_SECRET_FILE);
    if (process.platform !== 'win32') expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64url').length).toBe(32);
  });

  it('ATTACK: another engine (another home) derives other keys for the same deployment id', async () => {
    await using one = await tempDir();
    await using other = await tempDir();
    expect(requestStateKeys(one.dir).keyOf('dep_a')).not.toBe(requestStateKeys(other.dir).keyOf('dep_a'));
  });
});
