// The dashboard's first view, for bench/engine.js: a fresh browser context opens the one-time URL
// `mcpctl dashboard` would print and the page logs in, fetches the deployments and draws the list;
// the figure is the page's own clock (navigation start = 0) when every running deployment has its row.
// Debian's chromium through playwright-core (never a download); without chromium the rows are skipped.
// And the size of the page's code: every file under dist/ui, gzip-compressed as a server would send it.
import { accessSync, constants, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { median } from './load.js';

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

function chromiumPath() {
  for (const path of CHROMIUM) {
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** A browser for the first-view rows, or undefined (with the reason on stderr) when there is none. */
export async function startViewer() {
  const executablePath = chromiumPath();
  if (executablePath === undefined) {
    process.stderr.write('bench: no chromium (apt-get install chromium): the dashboard rows are skipped\n');
    return undefined;
  }
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
  return {
    /**
     * Median ms from navigation start to `rows` deployment rows on the list, over `runs` fresh
     * contexts, each logged in by a new code from `engine` (bench/engine.js's API handle).
     */
    async firstView(engine, rows, runs = 5) {
      const times = [];
      for (let i = 0; i < runs; i++) {
        const { url } = await engine.post('/v1/dashboard/codes', {});
        const context = await browser.newContext();
        try {
          const page = await context.newPage();
          await page.goto(url);
          // functions run in the page (its CSP refuses strings to evaluate); its globals through globalThis.
          // The page's clock is read by the check that finds the rows, not by a later round trip.
          const shown = (n) =>
            globalThis.document.querySelectorAll('tr[data-deployment]').length >= n && globalThis.performance.now();
          const at = await page.waitForFunction(shown, rows, { timeout: 30_000 });
          times.push(await at.jsonValue());
        } finally {
          await context.close();
        }
      }
      return median(times);
    },
    close: () => browser.close(),
  };
}

/** Bytes of every file under `dir`, as they are and gzip-compressed (level 9). */
export function codeSize(dir) {
  let raw = 0;
  let compressed = 0;
  const walk = (folder) => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) walk(path);
      else {
        const bytes = readFileSync(path);
        raw += bytes.length;
        compressed += gzipSync(bytes, { level: 9 }).length;
      }
    }
  };
  walk(dir);
  return { raw, compressed };
}
