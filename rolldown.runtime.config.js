// The runtime's process entry as one file (`npm run build`, after tsc): dist/serve/serve-bundle.js,
// which the engine spawns for every runtime process (warm or cold) when it is there
// (src/runtime/host/process.ts, serveBundleEntry). The MCP SDK, zod and the runtime are inside, so a
// process reads one file instead of a few hundred; what is loaded with createRequire (ajv) and
// the TypeScript compiler (never loaded by a running server) stay in node_modules.
// dist/runtime/serve-bundle.js (tsc's output) stays the entry of container images and of `node
// dist/runtime/serve-bundle.js` by hand: both behave the same.
import { defineConfig } from 'rolldown';

export default defineConfig({
  input: { 'serve-bundle': 'dist/runtime/serve-bundle.js' },
  platform: 'node',
  external: ['typescript', /^typescript\//],
  output: {
    dir: 'dist/serve',
    format: 'esm',
    entryFileNames: '[name].js',
    chunkFileNames: '[name]-[hash].js',
    cleanDir: true,
    // every process keeps the source it loaded in memory: the documentation comments stay in the
    // sources, licence comments stay here
    comments: { legal: true, annotation: false, jsdoc: false },
  },
});
