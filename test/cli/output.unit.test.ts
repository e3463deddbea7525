/**
 * The output module on an interactive terminal: the spinner must leave the terminal's line
 * discipline alone, so that Ctrl-C stays SIGINT and ends a deploy wait.
 */
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Output } from '../../src/cli/output.js';

/** A stream with what ora uses of a terminal. */
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

// ora looks at the process's own stdin: give it a terminal's shape for the length of a test.
const stdin = process.stdin as NodeJS.ReadStream & { setRawMode?: (mode: boolean) => unknown };
const saved = {
  isTTY: Object.getOwnPropertyDescriptor(stdin, 'isTTY'),
  setRawMode: Object.getOwnPropertyDescriptor(stdin, 'setRawMode'),
};
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllEnvs();
  for (const [key, descriptor] of Object.entries(saved)) {
    if (descriptor === undefined) Reflect.deleteProperty(stdin, key);
    else Object.defineProperty(stdin, key, descriptor);
  }
});

describe('Output.progress on a terminal', () => {
  it('never puts the terminal in raw mode, so Ctrl-C still interrupts', async () => {
    const rawModes: boolean[] = [];
    Object.defineProperty(stdin, 'isTTY', { value: true, configurable: true });
    Object.defineProperty(stdin, 'setRawMode', {
      value: (mode: boolean) => {
        rawModes.push(mode);
        return stdin;
      },
      configurable: true,
    });
    const stderr = terminal();
    let drawn = '';
    stderr.on('data', (chunk: Buffer) => (drawn += chunk.toString('utf8')));
    const out = new Output({ stdout: terminal(), stderr, json: false, quiet: false, color: false, ci: false });
    expect(out.interactive).toBe(true);

    const progress = await out.progress('deploying deploy_abc to production');
    progress.update('deploying deploy_abc to production: health checks (1/2 healthy)');
    progress.succeed('deployed deploy_abc');

    expect(drawn).toContain('deployed deploy_abc');
    expect(rawModes).toEqual([]);
  });

  it('shows the elapsed time after the text, from the first whole second; its last line is the command’s', async () => {
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

describe('Output.progress on a terminal of width 0', () => {
  it('writes plain lines instead of a spinner that would erase forever', async () => {
    // `stty size` → `0 0`: a TTY that reports no columns. A spinner there computes infinitely
    // many lines to erase on every frame; count the erasing and stop the flood early.
    const stderr = Object.assign(terminal(), { columns: 0, rows: 0 });
    let erased = 0;
    stderr.clearLine = () => {
      erased += 1;
      if (erased > 1000) throw new Error('the spinner keeps erasing lines');
      return true;
    };
    let drawn = '';
    stderr.on('data', (chunk: Buffer) => (drawn += chunk.toString('utf8')));
    const out = new Output({ stdout: terminal(), stderr, json: false, quiet: false, color: false, ci: false });

    const progress = await out.progress('deploying deploy_abc to production');
    for (let i = 0; i < 50; i++) progress.update(`deploying deploy_abc to production: health checks (${i}/50 healthy)`);
    progress.succeed('deployed deploy_abc');

    expect(erased).toBe(0);
    expect(drawn).toMatch(/^\[[^\]]+\] deploying deploy_abc to production\n/);
    expect(drawn).toMatch(/\] ok: deployed deploy_abc\n$/);
    expect(drawn.length).toBeLessThan(10_000);
  });
});
