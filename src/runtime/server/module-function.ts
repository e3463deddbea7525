/**
 * A function exported by a module of the definition (a tool handler, a completion), loaded once at
 * start-up from the compiled JavaScript inside the definition folder. A named export, or a key of
 * an exported default object. What goes wrong is said as a start problem, not thrown.
 */
import { pathToFileURL } from 'node:url';
import { compiledModulePath } from '../../definition/module-path.js';
import { importModule } from '../../shared/import-module.js';
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
    const loaded = await importModule(pathToFileURL(real).href);
    const fallback = loaded.default as Record<string, unknown> | undefined;
    const found =
      loaded[exportName] ?? (fallback !== null && typeof fallback === 'object' ? fallback[exportName] : undefined);
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

/**
 * Runs a module's function for one request: its `signal` aborts when the caller cancels or when
 * `timeoutMs` passes, and then the returned promise rejects with `onTimeout()` without waiting for
 * a function that ignores the signal. The function's own result or error is passed on as it is.
 */
export async function runWithDeadline<T>(
  run: (signal: AbortSignal) => T | Promise<T>,
  caller: AbortSignal,
  timeoutMs: number,
  onTimeout: () => Error,
): Promise<T> {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(caller.reason);
  caller.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort(new Error('time-out'));
      reject(onTimeout());
    }, timeoutMs);
  });
  try {
    return await Promise.race([Promise.resolve().then(() => run(controller.signal)), timeout]);
  } finally {
    clearTimeout(timer);
    caller.removeEventListener('abort', onAbort);
  }
}
