/**
 * How problems in a definition are named: field paths in the `tools[0].inputSchema.required[1]`
 * style, and the error a missing `${VAR}` raises. Pure: no IO.
 */
import { EXIT, UserError } from '../cli/errors.js';

export type FieldPath = ReadonlyArray<string | number>;

/** A problem found in a definition, before it is given a file position. */
export interface DefinitionIssue {
  path: FieldPath;
  message: string;
  severity: 'error' | 'warning';
  /** point at the key of the last path segment rather than at its value (an unknown field) */
  atKey?: boolean;
}

const PLAIN_KEY = /^[A-Za-z_$][\w$-]*$/;

/** `['tools', 0, 'inputSchema', 'required', 1]` → `tools[0].inputSchema.required[1]`. */
export function formatPath(path: FieldPath): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (PLAIN_KEY.test(segment)) text += text === '' ? segment : `.${segment}`;
    else text += `[${JSON.stringify(segment)}]`;
  }
  return text;
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
