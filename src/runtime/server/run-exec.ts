/**
 * Runs an `exec` handler's program: an argv array with no shell, the arguments as JSON on stdin,
 * a time-out and an output limit that kill the whole process group, and only the environment it
 * is given. At most a few programs run at once per instance (4 per core by default, or
 * `MCPCTL_EXEC_CONCURRENCY`): a call beyond that fails at once with a "busy" error rather than
 * waiting, so a flood of calls cannot pile up processes that each may run for minutes.
 */
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { SETTINGS, settingValueOrDefault } from '../../shared/settings.js';

/** The variable of the instance's environment that sets how many exec programs may run at once. */
export const EXEC_CONCURRENCY_ENV = SETTINGS.execConcurrency.env;

/** Programs running now in this process. */
let running = 0;

/**
 * The cap: `MCPCTL_EXEC_CONCURRENCY` when it is a whole number ≥ 1, else 4 per core. Read at each call (a
 * warm process gets its environment late); a wrong value is the default, not a failed call.
 */
export function execConcurrency(env: Record<string, string | undefined> = process.env): number {
  return settingValueOrDefault(SETTINGS.execConcurrency, { env }).value ?? 4 * Math.max(1, availableParallelism());
}

export interface ExecOptions {
  command: readonly string[];
  cwd: string;
  env: Record<string, string>;
  input: string;
  timeoutMs: number;
  maxBytes: number;
  signal?: AbortSignal;
}

export interface ExecResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  /** the last part of stderr, for error messages */
  stderr: string;
}

export class ExecError extends Error {
  override readonly name = 'ExecError';
  constructor(
    message: string,
    /** the program ran out of time (rather than failing otherwise) */
    readonly timedOut = false,
  ) {
    super(message);
  }
}

const STDERR_KEEP = 8 * 1024;

export function runExec(options: ExecOptions): Promise<ExecResult> {
  if (options.command[0] === undefined) return Promise.reject(new ExecError('the command is empty'));
  const limit = execConcurrency();
  if (running >= limit) {
    return Promise.reject(
      new ExecError(
        `busy: ${running} exec calls are running, the most this server runs at once (${EXEC_CONCURRENCY_ENV}=${limit}); try again in a moment`,
      ),
    );
  }
  running += 1;
  return spawnExec(options).finally(() => {
    running -= 1;
  });
}

function spawnExec(options: ExecOptions): Promise<ExecResult> {
  const [file = '', ...args] = options.command;
  const posix = process.platform !== 'win32';
  return new Promise<ExecResult>((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env,
      shell: false,
      stdio: ['pipe', 'pipe', 'pipe'],
      // its own process group, so a time-out also ends what it started
      detached: posix,
      windowsHide: true,
    });
    const stdout: Buffer[] = [];
    let stdoutSize = 0;
    let stderr = '';
    let failure: ExecError | undefined;
    let settled = false;

    const kill = (why: ExecError): void => {
      failure ??= why;
      if (child.pid === undefined) return;
      try {
        if (posix) process.kill(-child.pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(
      () =>
        kill(new ExecError(`${file} did not finish within ${options.timeoutMs} ms (time-out); it was stopped`, true)),
      options.timeoutMs,
    );
    const onAbort = (): void => kill(new ExecError('the request was cancelled'));
    options.signal?.addEventListener('abort', onAbort, { once: true });

    child.stdout.on('data', (chunk: Buffer) => {
      stdoutSize += chunk.length;
      if (stdoutSize > options.maxBytes) {
        kill(new ExecError(`${file} wrote more than the limit of ${options.maxBytes} bytes; it was stopped`));
        return;
      }
      stdout.push(chunk);
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_KEEP);
    });
    // a program that does not read its input closes the pipe early: that is not an error
    child.stdin.on('error', () => {});
    child.stdin.end(options.input);

    const finish = (result: ExecResult | ExecError): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      if (result instanceof ExecError) reject(result);
      else resolve(result);
    };
    child.on('error', (error: NodeJS.ErrnoException) => {
      const why =
        error.code === 'ENOENT'
          ? 'not found (is it installed and on PATH, or is the path right?)'
          : error.code === 'EACCES'
            ? 'not executable'
            : error.message;
      finish(new ExecError(`could not start ${file}: ${why}`));
    });
    child.on('close', (code, signal) => {
      if (failure !== undefined) finish(failure);
      else finish({ code, signal, stdout: Buffer.concat(stdout), stderr });
    });
  });
}
