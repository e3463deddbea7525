/**
 * The engine's home and key files must be the current user's alone: another user who can write
 * them is refused, one who could only read them loses that access (with a warning).
 */
import { chmod, chown, mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEngine, EngineConfigError } from '../../src/engine/engine.js';
import { checkPrivatePath } from '../../src/engine/file-modes.js';
import { homePaths } from '../../src/engine/home.js';
import { readEngineState } from '../../src/engine/engine-lock.js';
import type { Logger } from '../../src/engine/engine-log.js';
import { UserError } from '../../src/shared/errors.js';
import { TEST_KEY } from '../support/app.js';
import { tempDir, type TempDir } from '../support/temp.js';

let temp: TempDir;
beforeEach(async () => {
  temp = await tempDir('mcpctl-modes-');
});
afterEach(async () => {
  await temp.cleanup();
});

function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  const logger = {
    warnings,
    debug: () => {},
    info: () => {},
    warn: (message: string) => void warnings.push(message),
    error: () => {},
    child: () => logger,
  };
  return logger;
}

const start = (home: string, logger: Logger) =>
  startEngine({
    home,
    host: '127.0.0.1',
    port: 0,
    apiKey: TEST_KEY,
    version: '0.0.0-test',
    logger,
    env: {},
    limits: { ratePerSecond: 0 },
  });

const mode = async (path: string) => (await stat(path)).mode & 0o777;

describe('MCPCTL_HOME owner and mode', () => {
  it('ATTACK: the engine refuses a home every user can write, before it listens', async () => {
    const home = join(temp.dir, 'home');
    await mkdir(home);
    await chmod(home, 0o777);
    const error = await start(home, recordingLogger()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineConfigError);
    expect((error as Error).message).toMatch(
      /^the engine will not start: .*home can be written by every user \(mode 777\).*chmod 700/,
    );
  });

  it('ATTACK: the engine refuses a key file its group can write', async () => {
    const home = join(temp.dir, 'home');
    await mkdir(home, { mode: 0o700 });
    await writeFile(join(home, 'engine-settings.json'), '{}', { mode: 0o660 });
    await chmod(join(home, 'engine-settings.json'), 0o660);
    const error = await start(home, recordingLogger()).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/engine-settings\.json can be written by its group \(mode 660\)/);
  });

  it.skipIf(process.getuid?.() !== 0)('ATTACK: the engine refuses a home that belongs to another user', async () => {
    const home = join(temp.dir, 'home');
    await mkdir(home, { mode: 0o700 });
    await chown(home, 12345, 12345);
    const error = await start(home, recordingLogger()).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/home belongs to another user \(uid 12345, not 0\)/);
  });

  it('makes a home other users can read private, with a warning, and starts', async () => {
    const home = join(temp.dir, 'home');
    await mkdir(home);
    await chmod(home, 0o755);
    const logger = recordingLogger();
    const engine = await start(home, logger);
    try {
      expect(await mode(home)).toBe(0o700);
      expect(logger.warnings.join('\n')).toMatch(/home could be read by other users \(mode 755\); its mode is now 700/);
    } finally {
      await engine.close();
    }
  });

  it('a fresh home is created private and starts without a warning', async () => {
    const home = join(temp.dir, 'fresh', 'home');
    const logger = recordingLogger();
    const engine = await start(home, logger);
    try {
      expect(await mode(home)).toBe(0o700);
      expect(logger.warnings.filter((w) => w.includes('mode'))).toEqual([]);
    } finally {
      await engine.close();
    }
  });
});

describe('the CLI reading engine.json', () => {
  it('ATTACK: refuses a state file other users can write (it names the engine and its key)', async () => {
    const paths = homePaths(temp.dir);
    await writeFile(paths.stateFile, JSON.stringify({ url: 'http://127.0.0.1:1', pid: 1, port: 1, apiKey: 'x' }));
    await chmod(paths.stateFile, 0o666);
    const error = await readEngineState(paths).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).message).toMatch(
      /the engine's state file cannot be trusted: .*engine\.json can be written by every user/,
    );
  });

  it('makes a readable state file private and reads it', async () => {
    const paths = homePaths(temp.dir);
    await writeFile(paths.stateFile, JSON.stringify({ url: 'http://127.0.0.1:1', pid: 1, port: 1, apiKey: 'x' }));
    await chmod(paths.stateFile, 0o644);
    expect((await readEngineState(paths))?.url).toBe('http://127.0.0.1:1');
    expect(await mode(paths.stateFile)).toBe(0o600);
  });

  it('checkPrivatePath only reports with tighten: false, and accepts a missing path', async () => {
    const file = join(temp.dir, 'tls.key');
    await writeFile(file, 'k');
    await chmod(file, 0o640);
    expect(checkPrivatePath(file, 'file', { tighten: false }).tightened).toMatch(
      /can be read by other users \(mode 640\); it should be 600/,
    );
    expect(await mode(file)).toBe(0o640);
    expect(checkPrivatePath(join(temp.dir, 'missing'), 'file')).toEqual({});
  });
});
