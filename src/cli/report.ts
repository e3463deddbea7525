/**
 * What the user sees when a command fails, and its exit code: a usage error from commander, a
 * UserError (message, problems, hint, request id; one JSON document with --json; annotations in
 * GitHub Actions), or a bug (internal, with its stack).
 */
import { CommanderError } from 'commander';
import { EXIT, ExitError, UserError } from '../shared/errors.js';
import type { Output } from './output.js';
import { annotationText } from './render/format.js';

/** In GitHub Actions, each located problem on its line; the error itself when none is located. */
function annotateError(out: Output, error: UserError): void {
  const located = error.problems.filter((problem) => problem.where !== undefined);
  for (const problem of located) out.annotate('error', annotationText(problem), problem.where);
  // nothing to put on a line: the error itself, so the run's page shows it
  if (located.length === 0)
    out.annotate('error', error.hint === undefined ? error.message : `${error.message} (${error.hint})`);
}

export function report(error: unknown, out: Output, debug: boolean): number {
  if (error instanceof CommanderError) {
    if (error.exitCode === 0) return EXIT.ok; // --help, --version
    if (out.json)
      out.writeJson({
        error: { code: 'usage', message: error.message.replace(/^error: /, ''), exit_code: EXIT.usage },
      });
    return EXIT.usage;
  }
  if (error instanceof ExitError) return error.exitCode;
  if (error instanceof UserError) {
    if (out.json) {
      out.writeJson({
        error: {
          code: error.code,
          message: error.message,
          exit_code: error.exitCode,
          ...(error.requestId === undefined ? {} : { request_id: error.requestId }),
          ...(error.problems.length === 0 ? {} : { problems: error.problems }),
          ...(error.hint === undefined ? {} : { hint: error.hint }),
        },
      });
    }
    annotateError(out, error);
    out.error(error.message, {
      problems: error.problems,
      ...(error.hint === undefined ? {} : { hint: error.hint }),
      ...(error.requestId === undefined ? {} : { requestId: error.requestId }),
    });
    if (debug && error.cause instanceof Error && error.cause.stack !== undefined) out.stderr(`${error.cause.stack}\n`);
    return error.exitCode;
  }
  const err = error instanceof Error ? error : new Error(String(error));
  if (out.json) out.writeJson({ error: { code: 'internal', message: err.message, exit_code: EXIT.internal } });
  out.error(`internal error: ${err.message}`, {
    hint: 'this is a bug in mcpctl; please report it with the output above and the command you ran',
  });
  out.stderr(`${err.stack ?? err.message}\n`);
  return EXIT.internal;
}
