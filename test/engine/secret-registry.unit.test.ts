/**
 * The engine's one set of values to hide: every deployment's values and the engine's key, in
 * every deployment's lines and in the engine's log, counted per owner, one matcher for all.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger, redactingEngineLogger } from '../../src/engine/engine-log.js';
import {
  deploymentRedactor,
  ENGINE_OWNER,
  engineSecretValues,
  SecretRegistry,
  SHARED_MIN_LENGTH,
} from '../../src/engine/secret-registry.js';
import { LogBook } from '../../src/engine/deployments/log-book.js';
import { Secrets } from '../../src/runtime/server/logger.js';

const KEY = 'engine-key-0123456789abcdef0123456789';
const A_VALUE = 'postgres://a:pw-of-a@db/a';

describe('the engine-wide secret set', () => {
  it("hides one deployment's values and the engine's key in another deployment's lines", () => {
    const registry = new SecretRegistry();
    registry.add(ENGINE_OWNER, engineSecretValues(KEY, {}));
    const a = deploymentRedactor(registry, 'deploy_a', [A_VALUE]);
    const b = deploymentRedactor(registry, 'deploy_b', ['b-own']);
    expect(b.redactText(`leak ${A_VALUE} and ${KEY} and b-own`)).toBe('leak [redacted] and [redacted] and [redacted]');
    // a short value stays the business of its own deployment: `b-own` is not hidden from a's lines
    expect(a.redactText('b-own')).toBe('b-own');
    expect('b-own'.length).toBeLessThan(SHARED_MIN_LENGTH);
  });

  it('keeps a value two deployments hold until both release it, and forgets it then', () => {
    const registry = new SecretRegistry();
    const shared = 'shared-value-12345';
    const a = deploymentRedactor(registry, 'deploy_a', [shared]);
    const b = deploymentRedactor(registry, 'deploy_b', [shared]);
    a.release();
    expect(registry.redactText(shared)).toBe('[redacted]');
    b.release();
    expect(registry.redactText(shared)).toBe(shared);
    expect(registry.size).toBe(0);
  });

  it('replaces the longest value first, and values with expression characters literally', () => {
    const registry = new SecretRegistry();
    registry.add('x', ['abcdefgh', 'abcdefgh-longer', 'a.b*c+d?(e)[f]']);
    expect(registry.redactText('abcdefgh-longer abcdefgh a.b*c+d?(e)[f] aXbbcdd')).toBe(
      '[redacted] [redacted] [redacted] aXbbcdd',
    );
  });

  it("takes the engine's own credentials from its environment, not every variable", () => {
    const values = engineSecretValues(KEY, {
      ANTHROPIC_API_KEY: 'sk-ant-123456789',
      GITHUB_TOKEN: 'ghp_123456789',
      HOME: '/root/home',
      XDG_SESSION_TYPE: 'wayland',
    });
    expect(values).toEqual([KEY, 'sk-ant-123456789', 'ghp_123456789']);
  });

  it('scans a line once for a thousand values (one matcher, rebuilt only on change)', () => {
    const registry = new SecretRegistry();
    for (let i = 0; i < 1000; i += 1) registry.add(`d${i}`, [`value-${i}-${'x'.repeat(8)}`]);
    const line = `ok value-999-${'x'.repeat(8)} value-0-${'x'.repeat(8)}`;
    expect(registry.redactText(line)).toBe('ok [redacted] [redacted]');
    expect(registry.redactText('nothing to hide')).toBe('nothing to hide');
  });
});

describe("the engine's log", () => {
  it('hides every value of the set in messages and fields, errors and children included', () => {
    const registry = new SecretRegistry();
    registry.add(ENGINE_OWNER, [KEY]);
    const lines: string[] = [];
    const logger = redactingEngineLogger(createLogger({ write: (line) => lines.push(line) }), registry);
    logger
      .child({ component: 'x' })
      .error(`failed with ${KEY}`, { error: new Error(`bad ${KEY}`), nested: [{ url: `http://h/?k=${KEY}` }] });
    const text = lines.join('');
    expect(text).not.toContain(KEY);
    expect(JSON.parse(text)).toMatchObject({
      msg: 'failed with [redacted]',
      component: 'x',
      error: { message: 'bad [redacted]' },
      nested: [{ url: 'http://h/?k=[redacted]' }],
    });
  });
});

describe('a log book', () => {
  it('hides in what it reads a value that became secret after the line was kept', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcpctl-log-book-'));
    const book = new LogBook(dir, 'deploy_x', 10);
    const later = new Secrets();
    book.redactWith(later);
    book.append({ time: new Date().toISOString(), level: 'info', message: 'said later-secret-1' });
    later.add('later-secret-1');
    expect((await book.read({})).map((line) => line.message)).toEqual(['said [redacted]']);
    await book.settle();
    rmSync(dir, { recursive: true, force: true });
  });
});
