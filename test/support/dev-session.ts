/**
 * Runs `mcpctl dev` in-process through `run()`, with its own streams and a signal standing in for
 * Ctrl-C, and waits for what it prints.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { run } from '../../src/cli/main.js';
import { collector } from './cli.js';

// a bounded wait well inside the 30 s a test may take; a loaded machine starts `mcpctl dev` slowly
const WAIT_MS = 20_000;

export interface DevSession {
  stdout(): string;
  stderr(): string;
  /** waits until stdout (or stderr) matches, and returns the match */
  waitFor(pattern: RegExp, stream?: 'stdout' | 'stderr'): Promise<RegExpMatchArray>;
  /** Ctrl-C: resolves with the exit code */
  stop(): Promise<number>;
  [Symbol.asyncDispose](): Promise<void>;
}

export function startDev(
  args: string[],
  options: { env?: Record<string, string | undefined>; cwd?: string } = {},
): DevSession {
  const stdout = collector();
  const stderr = collector();
  const stdin = new PassThrough();
  const controller = new AbortController();
  let settled: number | undefined;
  const transcript = (stream: string) => `on ${stream}:\nstdout: ${stdout.text()}\nstderr: ${stderr.text()}`;
  // what dev remembers (the port of each file) goes to a home of this session, unless the test gives one
  const home = options.env?.MCPCTL_HOME === undefined ? mkdtempSync(join(tmpdir(), 'mcpctl-dev-home-')) : undefined;
  const exit = run(['dev', ...args], {
    stdout: stdout.stream,
    stderr: stderr.stream,
    stdin,
    env: { PATH: process.env.PATH, ...(home === undefined ? {} : { MCPCTL_HOME: home }), ...options.env },
    cwd: options.cwd ?? process.cwd(),
    signal: controller.signal,
  })
    .then((code) => (settled = code))
    .finally(() => {
      if (home !== undefined) rmSync(home, { recursive: true, force: true });
    });

  const session: DevSession = {
    stdout: () => stdout.text(),
    stderr: () => stderr.text(),
    waitFor(pattern, stream = 'stdout') {
      return waitForOutput(stream === 'stdout' ? stdout : stderr, pattern, exit, () => transcript(stream));
    },
    async stop() {
      controller.abort(new Error('interrupted'));
      return exit;
    },
    async [Symbol.asyncDispose]() {
      if (settled === undefined) await session.stop();
    },
  };
  return session;
}

/**
 * Resolves with the first match of `pattern` in what `output` holds, checked on each chunk written;
 * rejects when the command exits first or nothing matches within WAIT_MS.
 */
function waitForOutput(
  output: ReturnType<typeof collector>,
  pattern: RegExp,
  exit: Promise<number>,
  transcript: () => string,
): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const settle = (outcome: () => void) => {
      clearTimeout(deadline);
      output.stream.off('data', check);
      outcome();
    };
    const check = () => {
      const match = output.text().match(pattern);
      if (match !== null) settle(() => resolve(match));
      return match !== null;
    };
    const deadline = setTimeout(
      () => settle(() => reject(new Error(`gave up waiting for ${pattern} ${transcript()}`))),
      WAIT_MS,
    );
    if (check()) return;
    // listeners run in the order they were added: the collector has stored the chunk by now
    output.stream.on('data', check);
    void exit.then((code) => {
      if (!check()) settle(() => reject(new Error(`mcpctl dev exited with ${code} before ${pattern} ${transcript()}`)));
    });
  });
}
