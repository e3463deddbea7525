/**
 * `import()` of a module by URL (a definition's own handler module). Kept out of the CLI's bundle
 * (rolldown.config.js): the bundle is CommonJS compiled from V8's code cache on Node 20, where a
 * dynamic `import()` inside it has lost its loader; this module is an ES module of its own.
 */
export function importModule(url: string): Promise<Record<string, unknown>> {
  return import(url) as Promise<Record<string, unknown>>;
}
