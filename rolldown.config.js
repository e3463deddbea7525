// The CLI as a few files (`npm run build`, after tsc): dist/bundle/mcpctl.cjs and its chunks, which
// bin/mcpctl.cjs runs. CommonJS, so that on Node 20 V8's compiled code of each file can be kept between
// runs (src/cli/compile-cache.ts; Node 20 has no code cache for ES modules): `.cjs` names, as the
// package is "type": "module". One file per command and per lazily loaded part (every `import()` stays a
// chunk, loaded only when it runs); zod, yaml, commander and the rest of what a command needs at
// start-up are inside, so Node resolves and reads a few files instead of a few hundred. The engine
// daemon, the runtime (serve-bundle) and the library stay tsc's output in dist/.
// Left out, loaded from node_modules when used: the TypeScript compiler and the LLM providers' SDKs
// (large, for a few commands only), the Kubernetes client (only the kubernetes runner loads it), undici (the engine's
// gateway and the Docker Engine API client use it, of the CLI only `export image`; the /v1 client is on node:http), and
// what is loaded with createRequire (ajv).
import { defineConfig } from 'rolldown';

/**
 * `import process from 'node:process'` (chalk's supports-color, ora) makes Node's ESM loader build a
 * module of the process object, reading every property: stdin is opened, and net, dgram,
 * child_process and the report module load, about 9 ms of CPU. The global is the same object.
 */
const processGlobal = {
  name: 'process-global',
  // only ESM imports: a CommonJS require('process') returns the object itself already
  resolveId(id, _importer, extra) {
    return (id === 'node:process' || id === 'process') && extra?.kind === 'import-statement'
      ? '\0process-global'
      : undefined;
  },
  load(id) {
    return id === '\0process-global' ? 'export default globalThis.process;' : undefined;
  },
};

/**
 * commander loads node:child_process (and with it dgram) at start-up, for executable subcommands,
 * which mcpctl has none of: load it when a spawn happens instead. Where commander's line differs
 * (another version), nothing changes but the time.
 */
const lazyChildProcess = {
  name: 'lazy-child-process',
  transform(code, id) {
    if (!/node_modules[\\/]commander[\\/]lib[\\/]command\.js$/.test(id)) return undefined;
    return code.replace(
      "const childProcess = require('node:child_process');",
      "const childProcess = { spawn: (...args) => require('node:child_process').spawn(...args) };",
    );
  },
};

export default defineConfig({
  plugins: [processGlobal, lazyChildProcess],
  input: { mcpctl: 'dist/cli/entry.js' },
  platform: 'node',
  // what `includeDependenciesRecursively: false` below needs, said here so a build warns about nothing
  preserveEntrySignatures: 'allow-extension',
  // yaml's ES module build (the same code as its CommonJS one for Node, which it picks under the
  // "node" condition): no CommonJS wrappers to run, 28 kB less to compile; `validate` about 8%
  // faster (medians of 15 alternated runs of a 3-tool file). Its warnings go to console.warn
  // instead of process.emitWarning: stderr either way.
  resolve: { alias: { yaml: new URL('./node_modules/yaml/browser/index.js', import.meta.url).pathname } },
  external: [
    // an ES module of its own, for the one `import()` of a URL (src/shared/import-module.ts)
    /[\\/]shared[\\/]import-module\.js$/,
    'typescript',
    '@kubernetes/client-node',
    /^@kubernetes\/client-node\//,
    'undici',
    /^undici\//,
    'openai',
    /^openai\//,
    '@anthropic-ai/sdk',
    /^@anthropic-ai\/sdk\//,
    '@google/genai',
    /^@google\/genai\//,
  ],
  output: {
    dir: 'dist/bundle',
    format: 'cjs',
    // `import()` of what stays outside the bundle (node:, typescript, the LLM SDKs, the Kubernetes client) as
    // `require()`: a script compiled from a code cache on Node 20 has lost its dynamic import callback
    dynamicImportInCjs: false,
    entryFileNames: '[name].cjs',
    chunkFileNames: '[name]-[hash].cjs',
    cleanDir: true,
    // non-ASCII characters escaped: a file of ASCII alone is read and compiled as one-byte text, faster than UTF-16
    charset: 'ascii',
    // and no JSDoc: fewer bytes to read and scan, and no non-ASCII text left in comments
    comments: { legal: true, annotation: true, jsdoc: false },
    // Node's ESM loader costs about 0.8 ms of CPU per file (resolve, read, compile, link): modules
    // that are always loaded together go into one chunk. Only the modules named are moved; a
    // dependency of one of them that other commands share stays in its own chunk.
    codeSplitting: {
      includeDependenciesRecursively: false,
      groups: [
        // `--version` alone loads only these
        { name: 'version', test: /dist[\\/]shared[\\/](version|package-root)\.js$/ },
        // what every other command loads first (commander and the command table)
        {
          name: 'main',
          test: /dist[\\/](cli[\\/](main|context|report|render[\\/]format)|shared[\\/](errors|models))\.js$|node_modules[\\/]commander[\\/]|^\0process-global$/,
        },
        // what every command loads to write its output
        { name: 'output', test: /dist[\\/]cli[\\/](output|github|render[\\/]wrap)\.js$|node_modules[\\/]chalk[\\/]/ },
        { name: 'zod', test: /node_modules[\\/]zod[\\/]/ },
        // the light parts of the definition that validate and the service commands both use
        {
          name: 'names',
          test: /dist[\\/](definition[\\/](names|scaling|descriptions|tokenize|alerts-schema)|shared[\\/]paths)\.js$/,
        },
        // a definition file loaded and checked: validate, build, deploy <file>, test, up, dev, export. Not schema.js,
        // which builds every schema at once (the /v1/build request's): loading checks with schema-builders.js, section by section
        {
          name: 'definition',
          test: /dist[\\/](definition[\\/](?!(names|scaling|descriptions|tokenize|alerts-schema|schema)\.js$)[^\\/]+|shared[\\/]secret-name|api[\\/]build-request)\.js$/,
        },
        // what every command that talks to a service loads
        {
          name: 'client',
          test: /dist[\\/](api[\\/](alerts|responses|client|client-types|dashboard|engine-health|errors|guidance|http-request|log-stream|operations|server-source|test-evaluation|test-runs|transport|transport-options|usage)|cli[\\/](api-errors|config))\.js$/,
        },
        {
          name: 'local-engine',
          test: /dist[\\/](cli[\\/](local-engine|engine-daemon)|engine[\\/](home|engine-lock|health-fields|store[\\/](atomic|storage-fault)))\.js$/,
        },
        // an MCP client: tools and call
        {
          name: 'mcp-client',
          test: /dist[\\/]cli[\\/](commands[\\/](call|tools)|steps[\\/](mcp-target|tool-arguments)|render[\\/]tool-(list|result))\.js$/,
        },
        // following a deployment: deploy, up, rollback, status
        {
          name: 'deployment',
          test: /dist[\\/]cli[\\/](steps[\\/](deploy-config|deploy-server|deployment-target|deployment-wait)|render[\\/](ci-summary|deployment))\.js$/,
        },
      ],
    },
  },
});
