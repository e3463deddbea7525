/**
 * A function exported by a module of the definition (a tool handler, a completion), loaded once at
 * start-up from the compiled JavaScript inside the definition folder. A named export, or a key of
 * an exported default object. What goes wrong is said as a start problem, not thrown.
 */
import { pathToFileURL } from 'node:url';
import { compiledModulePath } from '../definition/module-path.js';
import { messageOf } from './content.js';
import { resolveRealInside } from './safe-path.js';

export type ModuleFunction<Args extends unknown[]> = (...args: Args) => unknown;

/** The function, or why it cannot be had (`note` follows "has no exported function …"). */
export async function loadModuleFunction<Args extends unknown[]>(
  realDir: string,
  module: string,
  exportName: string,
  note = '',
): Promise<{ fn: ModuleFunction<Args> } | { problem: string }> {
  const file = compiledModulePath(module);
  try {
    const real = await resolveRealInside(realDir, file);
    const loaded = (await import(pathToFileURL(real).href)) as Record<string, unknown>;
    const fallback = loaded.default as Record<string, unknown> | undefined;
    const found = loaded[exportName] ?? (fallback !== null && typeof fallback === 'object' ? fallback[exportName] : undefined);
    if (typeof found === 'function') return { fn: found as ModuleFunction<Args> };
    return { problem: `${module} has no exported function "${exportName}"${note}` };
  } catch (error) {
    const hint =
      file !== module && (error as NodeJS.ErrnoException).code === 'ENOENT'
        ? ' (a TypeScript module is compiled when a bundle is written: serve the bundle)'
        : '';
    return { problem: `cannot load ${module}: ${messageOf(error)}${hint}` };
  }
}
