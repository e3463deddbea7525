/** The process entry point: the only place that sets the exit code. */
import { startCompileCache } from './compile-cache.js';
import { exitIfIdle } from './exit-if-idle.js';

// V8's compiled code of the CLI, kept between runs (src/cli/compile-cache.ts): Node's own compile
// cache where there is one (22.1 and later), the bundle's own on Node 20.
startCompileCache();

const argv = process.argv.slice(2);
// No top-level await: the bundle of the CLI is CommonJS (rolldown.config.js), which has none.
void start();

async function start(): Promise<void> {
  // `mcpctl --version` alone, what scripts and CI steps call to check the tool, answers before
  // commander and the command table load; `--version --json` and the rest go through main.
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
    const { VERSION } = await import('../shared/version.js');
    process.stdout.write(`${VERSION}\n`);
    return;
  }
  const command = argv.find((arg) => !arg.startsWith('-'));
  // `export image` talks to Docker through undici (src/engine/runners/docker/engine-api.ts)
  if (command === 'export' && argv.includes('image')) await baselineWasm();
  await runMain();
}

/**
 * The HTTP parser of undici is WebAssembly. V8 compiles it once quickly, then again optimised on
 * background threads, and a process that is about to exit waits for that second compile: about
 * 0.23 s, measured on 2 cores. A command makes a handful of requests, for which the first compile
 * is plenty. Set before anything loads undici. The `/v1` client is on node:http
 * (src/api/http-request.ts), so only the commands that talk to Docker need it.
 */
async function baselineWasm(): Promise<void> {
  const { setFlagsFromString } = await import('node:v8');
  setFlagsFromString('--liftoff-only');
}

async function runMain(): Promise<void> {
  const { run } = await import('./main.js');

  const controller = new AbortController();
  let interrupted = false;
  // Ctrl-C and SIGTERM (docker stop, CI cancel) both end long waits and let commands clean up.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      interrupted = true;
      controller.abort(new Error(signal === 'SIGINT' ? 'interrupted' : 'terminated'));
      // A second signal ends at once.
      process.once(signal, () => process.exit(130));
    });
  }

  // A reader that went away (`mcpctl logs -f | head`, a log shipper that died) ends the command
  // quietly, like a signal would, instead of crashing on EPIPE; a serve stops cleanly.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', () => controller.abort(new Error('output closed')));
  }

  const code = await run(argv, { signal: controller.signal });
  process.exitCode = interrupted && code !== 0 ? 130 : code;
  // without the heap's tear-down when nothing is left to wait for (src/cli/exit-if-idle.ts), once
  // what is queued now (a listener, the callback of a last read) has run
  setImmediate(() => exitIfIdle());
}
