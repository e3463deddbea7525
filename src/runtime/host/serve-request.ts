/**
 * What a warm runtime process (`serve-bundle --warm`) is asked to serve: it loads and compiles
 * what a first request needs, says it is warm, then reads one JSON line on standard input, the
 * options of a cold start and the whole environment that replaces its own. It leaves by itself
 * when its parent goes away before that.
 */
import { createInterface } from 'node:readline';
import { prepareSchemaChecks } from '../server/validate-args.js';
import { warmUp } from './warm-up.js';

/** What a warm process is told to serve: the options of a cold start, and its whole environment. */
export interface ServeRequest {
  args: string[];
  env: Record<string, string>;
}

/**
 * Waits (loaded, listening to nothing) for the one request on standard input; `announce` writes
 * the `warm` line once the process is ready for it. Undefined when standard input ends first.
 */
export async function waitForRequest(announce: (line: string) => void): Promise<ServeRequest | undefined> {
  const parent = process.ppid;
  const orphaned = setInterval(() => {
    if (process.ppid !== parent) process.exit(0);
  }, 1_000);
  orphaned.unref();
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  const first = new Promise<string | undefined>((resolve) => {
    lines.once('line', resolve);
    lines.once('close', () => resolve(undefined));
  });
  // what the first definition would otherwise pay for: the meta-schema of its schemas, and the
  // compiling of the request path (a throwaway definition served once; nothing of it is kept)
  prepareSchemaChecks();
  if (!process.argv.includes('--no-warm-up')) await warmUp();
  announce(JSON.stringify({ event: 'warm', pid: process.pid }));
  const line = await first;
  clearInterval(orphaned);
  // the rest of standard input is not read; its end still stops the server
  lines.removeAllListeners('close');
  lines.close();
  process.stdin.resume();
  if (line === undefined) return undefined;
  const request = JSON.parse(line) as Partial<ServeRequest>;
  if (!Array.isArray(request.args) || typeof request.env !== 'object' || request.env === null)
    throw new Error('a serve request needs args and env');
  return { args: request.args.map(String), env: request.env };
}

/** Makes the environment exactly `env`: nothing of the warm process's own is left. */
export function replaceEnvironment(env: Record<string, string>): void {
  for (const name of Object.keys(process.env)) delete process.env[name];
  for (const [name, value] of Object.entries(env)) process.env[name] = String(value);
}
