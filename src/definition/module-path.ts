/** Where the JavaScript of a module file lives once a bundle has compiled it. Pure. */

const TS_EXTENSION = /\.(m|c)?ts$/;

/** True for TypeScript sources (`.ts`, `.mts`, `.cts`), not declaration files. */
export function isTypeScriptSource(path: string): boolean {
  return TS_EXTENSION.test(path) && !/\.d\.(m|c)?ts$/.test(path);
}

/** `calc.ts` → `calc.js`, `lib.mts` → `lib.mjs`, `calc.js` → `calc.js`. */
export function compiledModulePath(path: string): string {
  if (!isTypeScriptSource(path)) return path;
  return path.replace(TS_EXTENSION, (_, kind: string | undefined) => `.${kind ?? ''}js`);
}
