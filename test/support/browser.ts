/**
 * A real browser for the dashboard's tests: Debian's `chromium`, driven by playwright-core, which
 * never downloads a browser of its own. A page opened here collects everything that would show a
 * broken page to a person: console errors (a CSP violation is one), uncaught errors, and requests to
 * the page's own origin that failed or answered 4xx/5xx, unless the test said it expects them.
 * `assertClean()` fails listing them. Everything is closed by `await using` (or `close()`), however
 * the test ends: a page closes its context, a browser closes itself and every page in it.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** Where Debian installs it, when PATH does not say. */
export const DEFAULT_CHROMIUM = '/usr/bin/chromium';

/** A failure a test provokes on purpose (a wrong key, a stopped deployment): not a problem. */
export interface ExpectedFailure {
  /** the request's path (and query), exactly, or a pattern it matches */
  path: string | RegExp;
  /** the answer's status; any failure of the path when absent */
  status?: number;
}

export interface PageOptions {
  /** width and height of the page; a phone's width shows the narrow layout */
  viewport?: { width: number; height: number };
  /** how long a step of the page may take before it fails (ms); 10 s unless given */
  timeoutMs?: number;
}

/** One page in a fresh context (its own cookies and storage), and what went wrong on it. */
export interface PageHarness {
  context: BrowserContext;
  page: Page;
  /** what went wrong on the page so far, one line each */
  readonly problems: readonly string[];
  /** do not count failures of this request: the test provokes them */
  expectFailure(failure: ExpectedFailure): void;
  /** throws, listing every problem, unless there was none */
  assertClean(): void;
  /** a picture of the whole page, as a PNG file */
  screenshot(path: string): Promise<void>;
  /** closes the page's context; the browser stays */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * A running chromium. Launching one takes seconds and a new page under a second, so a test file
 * starts one (in `beforeAll`) and opens a page per test.
 */
export interface ChromiumHandle {
  browser: Browser;
  /** the chromium that runs */
  executablePath: string;
  openPage(options?: PageOptions): Promise<PageHarness>;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** A chromium of its own with one page: closing it closes the browser too. */
export type BrowserHarness = PageHarness & { browser: Browser; executablePath: string };

/** The chromium on PATH (as `command -v chromium` finds it), else Debian's path. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, 'chromium');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this folder
    }
  }
  return DEFAULT_CHROMIUM;
}

/** Launches headless chromium; close it with `await using` or `close()`. */
export async function startChromium(): Promise<ChromiumHandle> {
  const executablePath = findChromium();
  try {
    accessSync(executablePath, constants.X_OK);
  } catch {
    throw new Error(
      `chromium is not installed (looked on PATH and at ${DEFAULT_CHROMIUM}): install Debian's package with \`apt-get install chromium\`, as .ci/run does`,
    );
  }
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    // Chromium's sandbox refuses to start as root (CI containers run as root); elsewhere it stays on.
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
    timeout: 30_000,
  });
  const close = () => browser.close();
  return {
    browser,
    executablePath,
    openPage: (options) => openPage(browser, options),
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** Launches chromium with one page, for a test that needs no other. */
export async function launchBrowser(options: PageOptions = {}): Promise<BrowserHarness> {
  const running = await startChromium();
  try {
    const page = await running.openPage(options);
    const close = async () => {
      await page.close();
      await running.close();
    };
    return {
      ...page,
      browser: running.browser,
      executablePath: running.executablePath,
      close,
      [Symbol.asyncDispose]: close,
    };
  } catch (error) {
    await running.close();
    throw error;
  }
}

async function openPage(browser: Browser, options: PageOptions = {}): Promise<PageHarness> {
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 1280, height: 800 },
    // a dashboard with no network must not need any: nothing is fetched from elsewhere
    serviceWorkers: 'block',
  });
  context.setDefaultTimeout(options.timeoutMs ?? 10_000);
  try {
    return watch(context, await context.newPage());
  } catch (error) {
    await context.close();
    throw error;
  }
}

function watch(context: BrowserContext, page: Page): PageHarness {
  const problems: string[] = [];
  const expected: ExpectedFailure[] = [];
  let closed = false;

  const ownPath = (url: string): string | undefined => {
    try {
      const target = new URL(url);
      const origin = new URL(page.url()).origin;
      return target.origin === origin ? `${target.pathname}${target.search}` : undefined;
    } catch {
      return undefined;
    }
  };
  const isExpected = (path: string, status: number | undefined): boolean =>
    expected.some(
      (e) =>
        (typeof e.path === 'string' ? e.path === path : e.path.test(path)) &&
        (e.status === undefined || status === undefined || e.status === status),
    );

  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    // Chromium also reports each failed request of the page on the console, at the request's URL:
    // those are judged (and maybe expected) as requests below, not twice.
    if (message.text().startsWith('Failed to load resource') && ownPath(message.location().url) !== undefined) return;
    problems.push(`console error: ${message.text()}${where(message.location())}`);
  });
  page.on('pageerror', (error) => problems.push(`uncaught error: ${error.stack ?? error.message}`));
  page.on('response', (response) => {
    const status = response.status();
    const path = ownPath(response.url());
    if (status < 400 || path === undefined || isExpected(path, status)) return;
    problems.push(`${response.request().method()} ${path} answered ${status}`);
  });
  page.on('requestfailed', (request) => {
    const path = ownPath(request.url());
    const reason = request.failure()?.errorText ?? 'failed';
    // a request the page or a navigation cancelled (a long-poll given up) is not a failure
    if (path === undefined || reason.includes('ERR_ABORTED') || isExpected(path, undefined)) return;
    problems.push(`${request.method()} ${path} failed: ${reason}`);
  });

  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await context.close();
  };
  return {
    context,
    page,
    problems,
    expectFailure: (failure) => void expected.push(failure),
    assertClean() {
      if (problems.length === 0) return;
      throw new Error(`the page had ${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    },
    async screenshot(path) {
      await page.screenshot({ path, fullPage: true });
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

function where(location: { url: string; lineNumber: number }): string {
  return location.url === '' ? '' : ` (${location.url}:${location.lineNumber + 1})`;
}
