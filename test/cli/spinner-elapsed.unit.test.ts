/**
 * A spinner shows the time so far after its text (`deploying weather… 4 s`), from the first whole
 * second, and its last line is the command's own (which says how long it took where that matters).
 */
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Output } from '../../src/cli/output.js';

function terminal() {
  return Object.assign(new PassThrough(), {
    isTTY: true,
    columns: 100,
    rows: 40,
    cursorTo: () => true,
    moveCursor: () => true,
    clearLine: () => true,
  });
}

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllEnvs();
});

describe('Output.progress on a terminal', () => {
  it('shows the elapsed time after the text', async () => {
    // a terminal as a person has it: the spinner library draws nothing animated under CI or a dumb TERM
    vi.stubEnv('CI', undefined);
    vi.stubEnv('TERM', 'xterm-256color');
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout', 'performance'] });
    const stderr = terminal();
    let drawn = '';
    stderr.on('data', (chunk: Buffer) => (drawn += chunk.toString('utf8')));
    const out = new Output({ stdout: terminal(), stderr, json: false, quiet: false, color: false, ci: false });

    const progress = await out.progress('deploying weather');
    await vi.advanceTimersByTimeAsync(500);
    expect(drawn).not.toMatch(/deploying weather \d/);
    await vi.advanceTimersByTimeAsync(4_000);
    expect(drawn).toContain('deploying weather 4 s');
    progress.succeed('deployed weather');
    const last = drawn.slice(drawn.lastIndexOf('deployed weather'));
    expect(last).toBe('deployed weather\n');
  });
});
