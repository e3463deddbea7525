/**
 * Runs `mcpctl dev` in-process through `run()`, with its own streams and a signal standing in for
 * Ctrl-C, and waits for what it prints.
 */
import { PassThrough } from 'node:stream';
import { run } from '../../src/cli/main.js';
import { collector } from './cli.js';

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
  const exit = run(['dev', ...args], {
    stdout: stdout.stream,
    stderr: stderr.stream,
    stdin,
    env: { PATH: process.env.PATH, ...options.env },
    cwd: options.cwd ?? process.cwd(),
    signal: controller.signal,
  }).then((code) => (settled = code));

  const session: DevSession = {
    stdout: () => stdout.text(),
    stderr: () => stderr.text(),
    async waitFor(pattern, stream = 'stdout') {
      for (let i = 0; i < 400; i++) {
        const match = (stream === 'stdout' ? stdout : stderr).text().match(pattern);
        if (match !== null) return match;
        if (settled !== undefined)
          throw new Error(`mcpctl dev exited with ${settled} before ${pattern}:\n${stdout.text()}\n${stderr.text()}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error(
        `gave up waiting for ${pattern} on ${stream}:\nstdout: ${stdout.text()}\nstderr: ${stderr.text()}`,
      );
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
