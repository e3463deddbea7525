/**
 * The built binary runs the CLI's bundle (dist/bundle/, made by rolldown.config.js). A test that
 * records the module URLs a run resolves sees chunks; this maps each chunk to the modules it holds,
 * which rolldown names in a `// <path>` comment above each (`// node_modules/zod/v4/core/core.js`,
 * `// dist/cli/main.js`), as `/node_modules/…` and `/dist/…`. Other URLs stand for themselves.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = join(import.meta.dirname, '..', '..');
/** The bundle's entry, which bin/mcpctl.cjs requires. */
export const BUNDLE_ENTRY = join(ROOT, 'dist', 'bundle', 'mcpctl.cjs');
const BUNDLE_DIR = `${pathToFileURL(join(ROOT, 'dist', 'bundle')).href}/`;

/** The modules behind the loaded URLs; fails unless the bundle's entry is among them and names its module. */
export async function loadedModules(urls: string[]): Promise<string[]> {
  if (!urls.includes(pathToFileURL(BUNDLE_ENTRY).href))
    throw new Error(`the binary did not run ${BUNDLE_ENTRY}: run \`npm run build\``);
  const modules = await Promise.all(
    urls.map(async (url) => {
      if (!url.startsWith(BUNDLE_DIR)) return [url];
      const source = await readFile(fileURLToPath(url), 'utf8');
      return [...source.matchAll(/^\/\/ ((?:node_modules|dist)\/\S+)$/gm)].map((match) => `/${match[1]}`);
    }),
  );
  const flat = modules.flat();
  if (!flat.includes('/dist/cli/entry.js'))
    throw new Error(`${BUNDLE_ENTRY} does not name its module (// dist/cli/entry.js): has rolldown's output changed?`);
  return flat;
}
