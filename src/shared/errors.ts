/**
 * The few errors mcpctl knows, and the exit codes a pipeline can rely on. The lowest layer: every
 * other one may throw these. Classify where the error happens; only the entry point turns them
 * into an exit.
 */

export const EXIT = {
  ok: 0,
  /** a bug: the stack trace is printed with a hint to report it */
  internal: 1,
  /** the input: bad flags or arguments, an invalid definition or env file, an unknown id, a wrong state */
  usage: 2,
  /**
   * the configuration: no API key or a refused one, a bad config file, profile or service URL, a
   * variable the run needs that the environment does not set, a service that does not offer this
   */
  config: 3,
  /** the service is unreachable, timed out, rate-limited or failing (5xx): safe to retry later */
  transient: 4,
  build_failed: 5,
  deploy_failed: 6,
  /** the test ran but its success rate (or an expectation) fell below the threshold */
  test_failed: 7,
  /** waiting ended while the work (a deployment, a build) is still in progress: safe to wait again */
  timeout: 8,
  /** interrupted by Ctrl-C */
  interrupted: 130,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export interface Problem {
  /** where: `file:line:column` or a JSON path */
  where?: string;
  /** the field path inside the document, such as tools[0].name */
  path?: string;
  message: string;
}

/** A problem as one line of text: `path: message`, or the message alone when it has no path. */
export function problemText(problem: Problem): string {
  return problem.path === undefined || problem.path === '' ? problem.message : `${problem.path}: ${problem.message}`;
}

/**
 * An error the user can fix. The message says what went wrong; `hint` says what to do next.
 * Never carries a stack trace to the terminal.
 */
export class UserError extends Error {
  override readonly name = 'UserError';
  readonly exitCode: ExitCode;
  readonly hint: string | undefined;
  readonly problems: Problem[];
  readonly requestId: string | undefined;
  /** machine-readable code, shown in --json output */
  readonly code: string;

  constructor(
    message: string,
    options: {
      exitCode?: ExitCode;
      hint?: string;
      problems?: Problem[];
      requestId?: string;
      code?: string;
      cause?: unknown;
    } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.exitCode = options.exitCode ?? EXIT.usage;
    this.hint = options.hint;
    this.problems = options.problems ?? [];
    this.requestId = options.requestId;
    this.code = options.code ?? 'usage';
  }
}

/** The failure was already reported (for example a failed deployment rendered in full); just exit. */
export class ExitError extends Error {
  override readonly name = 'ExitError';
  constructor(readonly exitCode: ExitCode) {
    super(`exit ${exitCode}`);
  }
}

export function isUserError(error: unknown): error is UserError {
  return error instanceof UserError;
}
