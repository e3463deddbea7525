/**
 * The folder of the installed mcpctl package (the one holding its package.json), found by walking
 * up from this module. It works from src/ (tests), from the tsc output in dist/ and from the CLI's
 * bundle in dist/bundle/, whose chunks sit at another depth than the modules they were made from:
 * paths to the package's own files (package.json, templates/, schema/, dist/engine/daemon.js,
 * dist/runtime/serve-bundle.js) start here rather than from `import.meta.url`.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

export function packageRoot(): string {
  if (root !== undefined) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find the mcpctl package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
  root = dir;
  return dir;
}
