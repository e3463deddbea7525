/**
 * The problems found in a definition, and the errors a `${VAR}` reference raises. Pure: no IO.
 */
import { EXIT, UserError } from '../shared/errors.js';
import type { FieldPath } from '../shared/paths.js';

/** A problem found in a definition, before it is given a file position. */
export interface DefinitionIssue {
  path: FieldPath;
  message: string;
  severity: 'error' | 'warning';
  /** point at the key of the last path segment rather than at its value (an unknown field) */
  atKey?: boolean;
}

/** A `${VAR}` reference whose variable is not set (and has no `:-default`). */
export class MissingEnvVarError extends UserError {
  readonly variable: string;
  readonly field: string;

  constructor(variable: string, field: string) {
    super(`environment variable ${variable} is not set${field === '' ? '' : ` (used by ${field})`}`, {
      // what the environment lacks is configuration (a CI secret, an export), not the command
      exitCode: EXIT.config,
      code: 'missing_env_var',
      hint: `set ${variable} in the environment, or give a default with \${${variable}:-value}`,
    });
    this.variable = variable;
    this.field = field;
  }
}

/** A `${...}` reference that cannot be parsed. */
export class EnvSyntaxError extends UserError {
  constructor(message: string, field: string) {
    super(field === '' ? message : `${field}: ${message}`, {
      code: 'invalid_env_ref',
      hint: 'write ${NAME} or ${NAME:-default}; write $${ for a literal ${',
    });
  }
}
