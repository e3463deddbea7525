// The CLI as a few files (`npm run build`, after tsc): dist/bundle/mcpctl.js and its chunks, which
// bin/mcpctl.js runs. One file per command and per lazily loaded part (every `import()` stays a
// chunk, loaded only when it runs); zod, yaml, commander and the rest of what a command needs at
// start-up are inside, so Node resolves and reads a few files instead of a few hundred. The engine
// daemon, the runtime (serve-bundle) and the library stay tsc's output in dist/.
// Left out, loaded from node_modules when used: the TypeScript compiler and the LLM providers' SDKs
// (large, for a few commands only), the Kubernetes client (only the kubernetes runner loads it), undici (only the Docker
// Engine API client, src/engine/docker/engine-api.ts, uses it; the /v1 client is on node:http), and what is loaded with
// createRequire (ajv).
import { defineConfig } from 'rolldown';

export default defineConfig({
  input: { mcpctl: 'dist/cli/entry.js' },
  platform: 'node',
  external: [
    'typescript',
    '@kubernetes/client-node',
    /^@kubernetes\/client-node\//,
    'undici',
    /^undici\//,
    'openai',
    /^openai\//,
    '@anthropic-ai/sdk',
    /^@anthropic-ai\/sdk\//,
  ],
  output: { dir: 'dist/bundle', format: 'esm', entryFileNames: '[name].js', chunkFileNames: '[name]-[hash].js', cleanDir: true },
});
