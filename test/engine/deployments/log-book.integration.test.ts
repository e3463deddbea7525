/**
 * A deployment's log book on disk: lines reach the file shortly after they are appended, every
 * book's lines are written once settleAll resolves (an engine's close), and a home that was
 * removed is never made again by a late write.
 */
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LogBook } from '../../../src/engine/deployments/log-book.js';
import { tempDir, type TempDir } from '../../support/temp.js';

let home: TempDir | undefined;
afterEach(async () => {
  await home?.cleanup();
  home = undefined;
});

const line = (msg: string) => ({ time: new Date().toISOString(), level: 'info' as const, message: msg });

describe('the log book', () => {
  it('writes the lines of every book, ended deployments too, by the time settleAll resolves', async () => {
    home = await tempDir('mcpctl-logbook-');
    const dir = join(home.dir, 'deployment-logs');
    const books = ['deploy_a', 'deploy_b'].map((id) => new LogBook(dir, id, 100));
    books[0]!.append(line('one'));
    books[1]!.append(line('two'));
    books[1]!.append(line('three'));
    await LogBook.settleAll();
    expect(
      (await readFile(join(dir, 'deploy_a.ndjson'), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { message: string }).message),
    ).toEqual(['one']);
    expect((await readFile(join(dir, 'deploy_b.ndjson'), 'utf8')).trim().split('\n')).toHaveLength(2);
  });

  it('does not make a removed home again: the line stays in memory only', async () => {
    home = await tempDir('mcpctl-logbook-');
    const gone = home.dir;
    const book = new LogBook(join(gone, 'deployment-logs'), 'deploy_c', 100);
    await rm(gone, { recursive: true, force: true });
    book.append(line('late'));
    await LogBook.settleAll();
    expect(existsSync(gone)).toBe(false);
    expect((await book.read({})).map((l) => l.message)).toEqual(['late']);
  });
});
