/**
 * How a runtime process's start fails, as one error: what kind of failure it was (some go away by
 * themselves on a busy machine, some never do), the last lines the process wrote, and the runtime's
 * own reasons when it said why it cannot serve.
 */
import { problemText, type Problem } from '../../shared/errors.js';
import type { Exit } from './process-spawn.js';

/**
 * How a start failed: `refused` (the runtime said why: the definition cannot be served),
 * `exited` (it ended with an exit code before listening), `killed` (by a signal), `timeout` (no
 * listening line in time), `spawn` (the process could not be created), `missing` (no entry file).
 * `timeout`, `killed` and `spawn` may go away by themselves (a busy machine); the others will not.
 */
export type StartFailureKind = 'refused' | 'exited' | 'killed' | 'timeout' | 'spawn' | 'missing';

/**
 * The process did not come up; `output` holds its last lines. When the runtime said why itself
 * (a definition it cannot serve), `problems` are its reasons, such as `tools[0].handler: …`, and
 * the message is one line.
 */
export class RuntimeProcessError extends Error {
  override readonly name = 'RuntimeProcessError';
  /** the runtime's reasons as lines of text (`tools[0].handler: …`), for people */
  readonly problems: string[];
  constructor(
    message: string,
    readonly output: string[],
    /** the runtime's reasons, each at its field of the definition */
    readonly details: Problem[] = [],
    readonly kind: StartFailureKind = 'exited',
  ) {
    super(output.length === 0 ? message : `${message}\n${output.map((line) => `  ${line}`).join('\n')}`);
    this.problems = details.map(problemText);
  }
}

/** The runtime's own report of a start that cannot work, as one error. */
export function startFailure(report: { error: string; problems: Problem[] }): RuntimeProcessError {
  const { error, problems } = report;
  const unsaid = problems.map(problemText).filter((problem) => !error.includes(problem));
  const message = unsaid.length === 0 ? error : `${error.replace(/: \d+ problems$/, '')}: ${unsaid.join('; ')}`;
  return new RuntimeProcessError(message, [], problems, 'refused');
}

/** The process ended before it was ready: by an exit code (`exited`) or a signal (`killed`). */
export function endedError(what: string, exit: Exit, recent: string[]): RuntimeProcessError {
  const { code, signal } = exit;
  return new RuntimeProcessError(
    `${what} (${signal ?? `code ${code}`})`,
    recent,
    [],
    signal === null ? 'exited' : 'killed',
  );
}

/** The process could not be created at all. */
export function spawnError(error: Error, recent: string[]): RuntimeProcessError {
  return new RuntimeProcessError(`the runtime could not be started: ${error.message}`, recent, [], 'spawn');
}
