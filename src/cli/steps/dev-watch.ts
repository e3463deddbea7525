/**
 * How `mcpctl dev` follows its files: the folders of the definition and of every file it references are
 * watched, a burst of changes (an editor saving in several writes) becomes one reload, and a change
 * during a reload brings one more after it. Runs until Ctrl-C, or with --stdio until the client closes stdin.
 */
import { watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';
import type { CommandContext } from '../context.js';

const DEBOUNCE_MS = 150;
const MAX_WATCHED_FOLDERS = 256;

export interface WatchOptions {
  stdio: boolean;
  /** the files to watch, asked again after each reload */
  watchFiles: () => string[];
  reload: () => Promise<void>;
}

/** Watches the files until Ctrl-C (or, with --stdio, until the client closes stdin). */
export async function serveUntilStopped(ctx: CommandContext, options: WatchOptions): Promise<void> {
  let watchers: FSWatcher[] = [];
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;

  const rewatch = (): void => {
    for (const watcher of watchers) watcher.close();
    watchers = watchFolders(options.watchFiles(), () => schedule());
  };
  const run = (): void => {
    if (running !== undefined) {
      again = true;
      return;
    }
    running = options
      .reload()
      .catch((error: unknown) => ctx.out.warn(`reload: ${error instanceof Error ? error.message : String(error)}`))
      .finally(() => {
        running = undefined;
        rewatch();
        if (again) {
          again = false;
          run();
        }
      });
  };
  // editors write a file in several steps: reload once they are done
  const schedule = (): void => {
    clearTimeout(timer);
    timer = setTimeout(run, DEBOUNCE_MS);
  };

  rewatch();
  try {
    await untilStopped(ctx, options.stdio);
  } finally {
    clearTimeout(timer);
    for (const watcher of watchers) watcher.close();
    await running;
  }
}

/** A watcher on each folder of `files`; a folder that cannot be watched is left out. */
function watchFolders(files: string[], onChange: () => void): FSWatcher[] {
  const folders = [...new Set(files.map((path) => dirname(path)))].slice(0, MAX_WATCHED_FOLDERS);
  return folders.flatMap((folder) => {
    try {
      const watcher = watch(folder, { persistent: false }, onChange);
      watcher.on('error', () => watcher.close());
      return [watcher];
    } catch {
      return [];
    }
  });
}

function untilStopped(ctx: CommandContext, stdio: boolean): Promise<void> {
  return new Promise<void>((resolveStop) => {
    if (ctx.signal.aborted) return resolveStop();
    ctx.signal.addEventListener('abort', () => resolveStop(), { once: true });
    if (stdio) {
      ctx.io.stdin.once('end', () => resolveStop());
      ctx.io.stdin.once('close', () => resolveStop());
    }
  });
}
