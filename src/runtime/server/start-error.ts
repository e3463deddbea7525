/**
 * The one error a runtime's start throws for a definition it cannot serve, carrying every
 * problem found (not just the first) so a developer fixes them in one pass.
 */
import { problemText, type Problem } from '../../shared/errors.js';

/** The definition cannot be served as it is: missing variables, files, exports. */
export class RuntimeStartError extends Error {
  override readonly name = 'RuntimeStartError';
  /** the same problems as lines of text (`tools[0].handler: …`), for people */
  readonly problems: string[];
  constructor(readonly details: Problem[]) {
    const problems = details.map(problemText);
    super(`the server cannot start: ${problems.length === 1 ? problems[0] : `${problems.length} problems`}`);
    this.problems = problems;
  }
}
