/**
 * Regular expressions from definitions (JSON Schema `pattern` and `patternProperties`) on a
 * linear-time engine, RE2 (the `re2js` port): matching takes time proportional to the input, so
 * a pattern like `^(a+)+$` cannot stall a server on a crafted argument, as it can with the
 * backtracking `RegExp`. RE2 has no backreferences and no lookaround; such a pattern is refused
 * when a definition is validated, with a message saying so. Pure.
 */
import { createRequire } from 'node:module';
import type { RE2JS as RE2JSClass } from 're2js';

// re2js (its CommonJS build) is required when the first pattern is compiled, not imported: most
// servers have no pattern, and an instance that loads it at start holds about 0.8 MB more for ever.
let RE2JS: typeof RE2JSClass | undefined;
function re2(): typeof RE2JSClass {
  RE2JS ??= (createRequire(import.meta.url)('re2js') as { RE2JS: typeof RE2JSClass }).RE2JS;
  return RE2JS;
}

/** What ajv (`code.regExp`) and the engine's local agent need of a compiled pattern. */
export interface LinearRegExp {
  test(input: string): boolean;
  readonly source: string;
  /** always `linear`: lets tests and callers see which engine runs */
  readonly engine: 'linear';
}

export class LinearPatternError extends Error {
  override readonly name = 'LinearPatternError';
}

const WHY = 'patterns run on a linear-time engine (RE2) so that no argument can make matching slow';

/** Why `pattern` cannot run on the linear-time engine, or undefined when it can. */
export function linearPatternProblem(pattern: string): string | undefined {
  try {
    compileLinear(pattern);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * Compiles a JSON Schema pattern (ECMA-262 syntax, as a `u`-flag RegExp reads it) for RE2.
 * `flags`: the RegExp flags that matter here (`i`, `m`, `s`); `u` and `g` change nothing.
 * Throws LinearPatternError naming what RE2 cannot do.
 */
export function compileLinear(pattern: string, flags = ''): LinearRegExp {
  if (/\\[1-9]|\\k</.test(stripClasses(pattern))) {
    throw new LinearPatternError(`backreferences (\\1, \\k<name>) are not supported: ${WHY}`);
  }
  if (/\(\?<?[=!]/.test(stripClasses(pattern).replace(/\\./g, '_'))) {
    throw new LinearPatternError(`lookahead and lookbehind ((?=…), (?!…), (?<=…), (?<!…)) are not supported: ${WHY}`);
  }
  const engine = re2();
  let mask = 0;
  if (flags.includes('i')) mask |= engine.CASE_INSENSITIVE;
  if (flags.includes('m')) mask |= engine.MULTILINE;
  if (flags.includes('s')) mask |= engine.DOTALL;
  let compiled: RE2JSClass;
  try {
    compiled = engine.compile(engine.translateRegExp(pattern), mask);
  } catch (error) {
    const detail = error instanceof Error ? error.message.replace(/^error parsing regexp: /, '') : String(error);
    throw new LinearPatternError(`the pattern cannot be used (${detail}): ${WHY}`);
  }
  return { test: (input) => compiled.test(input), source: pattern, engine: 'linear' };
}

/** The pattern without its character classes (`[\1]` is no backreference), for the checks above. */
function stripClasses(pattern: string): string {
  return pattern.replace(/\\\\/g, '').replace(/\[(?:\\.|[^\]\\])*\]/g, '[]');
}

/**
 * The engine ajv takes as `code.regExp`: `(pattern, flags) => { test }`. `code` names it in
 * generated code (ajv calls it by reference here; no standalone code is generated).
 */
export const linearRegExpEngine = Object.assign(
  (pattern: string, flags: string): LinearRegExp => compileLinear(pattern, flags),
  {
    code: 'linearRegExpEngine',
  },
);
