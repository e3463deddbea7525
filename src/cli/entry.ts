/** The process entry point: the only place that sets the exit code. */
import { run } from './main.js';

const controller = new AbortController();
let interrupted = false;
process.once('SIGINT', () => {
  interrupted = true;
  controller.abort(new Error('interrupted'));
  // A second Ctrl-C ends at once.
  process.once('SIGINT', () => process.exit(130));
});

const code = await run(process.argv.slice(2), { signal: controller.signal });
process.exitCode = interrupted && code !== 0 ? 130 : code;
